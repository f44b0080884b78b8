"""Old flat path of gemm/basic/gemm_afp4wfp4.py: the same module object, as aiter's import alias gives."""
import sys

from .gemm.basic import gemm_afp4wfp4 as _module

sys.modules[__name__] = _module
