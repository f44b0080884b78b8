"""aiter.ops.triton.gluon.gemm_afp4wfp4 at f3be04a12a0c: only ``_gemm_afp4wfp4_reduce_kernel``, which files launch
directly (dgavriloff's v211 sums its split-K partials with it).

aiter's is a Gluon kernel: explicit layouts (a BlockedLayout over (split, m, n) for the load, another over (m, n)
for the store, a layout conversion between), ``gl.sum`` over the split axis. Its arithmetic is the Triton reduce
kernel's (``_triton_kernels/gemm/basic/gemm_afp4wfp4.py``), read line for line at that commit: the same
signature, rows and columns wrapped (``% M``, ``% N``), all ``MAX_KSPLIT`` slices loaded unmasked when
``ACTUAL_KSPLIT == MAX_KSPLIT`` and masked without ``other`` otherwise, the sum in fp32, one conversion to the
output's type at the store. Layouts decide which thread holds what, not the values, so the emulation serves it
with that Triton kernel. Weak spot: the order of the fp32 sum over splits is the interpreter's (or compiled
Triton's), not Gluon's; the judge bounds an fp32 sum in any order. Not emulated (named as such when imported):
the Gluon GEMM kernel, its wrapper and config reader.
"""
from ...._not_emulated import missing_module_name
from .._triton_kernels.gemm.basic.gemm_afp4wfp4 import _gemm_afp4wfp4_reduce_kernel  # noqa: F401


def __getattr__(name):  # aiter's other names here (the Gluon GEMM, its wrapper): recorded and named
    raise missing_module_name(__name__, name)
