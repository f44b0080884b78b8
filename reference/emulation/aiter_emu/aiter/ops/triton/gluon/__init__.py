"""aiter.ops.triton.gluon at f3be04a12a0c: aiter's Gluon kernels. Only ``gemm_afp4wfp4``'s reduce kernel is
emulated (files launch it directly); the rest of the package is reported by name as not emulated."""
