"""aiter.ops.triton.utils._triton.arch_info: the emulation always models gfx950."""
from ....._emulation import ARCH


def get_arch():
    return ARCH


def is_fp4_avail():
    return get_arch() in ("gfx950",)


def is_fp8_avail():
    return get_arch() in ("gfx942", "gfx950")
