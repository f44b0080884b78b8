"""aiter.ops.triton.utils.core: where aiter's Triton kernels and their tuned configs live.

In aiter, ``AITER_TRITON_CONFIGS_PATH`` is the ``configs`` directory inside the package, and some
submissions write their own tuned JSON there (``gemm/gfx950-<name>-N=<N>-K=<K>.json``) for aiter's
``get_gemm_config`` to read. Here it is a writable directory per process (``$MXFP4_FUZZ_AITER_CONFIGS``
or a fresh temporary one), so a file a submission writes never lands in our source tree; it is seeded
with the emulation's gfx950 tables as aiter's JSON files (gemm_config_utils).
"""
import atexit
import os
import shutil
import tempfile

AITER_TRITON_OPS_PATH = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
AITER_TRITON_CONFIGS_PATH = os.environ.get("MXFP4_FUZZ_AITER_CONFIGS") or ""
if not AITER_TRITON_CONFIGS_PATH:
    AITER_TRITON_CONFIGS_PATH = tempfile.mkdtemp(prefix="aiter-configs-")
    atexit.register(shutil.rmtree, AITER_TRITON_CONFIGS_PATH, True)
