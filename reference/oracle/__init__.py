"""The oracle: MXFP4 as aiter's competition semantics define it, in pure PyTorch (no Triton, nothing of
``reference.emulation`` or ``kernels``): e2m1 and E8M0 codecs, the quantizer, the layouts, the exact
product and its derived bound, the task's inputs. ``reference`` re-exports its API."""
