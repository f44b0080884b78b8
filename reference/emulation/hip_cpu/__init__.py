"""HIP on the CPU tier: a submission's HIP source compiled for the host against our model of the HIP
runtime and the gfx950 device (include/), so its kernels run here and their numbers get verdicts."""
