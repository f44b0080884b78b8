"""aiter's C++ enums (pybind11 in aiter, ``csrc/include/aiter_enum.h``), as Python IntEnums."""
import enum


class _PybindStyleEnum(enum.IntEnum):
    # pybind11 enums print as "QuantType.per_1x32"; IntEnum would print the number.
    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


class QuantType(_PybindStyleEnum):
    No = 0
    per_Tensor = 1
    per_Token = 2
    per_1x32 = 3
    per_1x128 = 4
    per_128x128 = 5


class ActivationType(_PybindStyleEnum):
    No = -1
    Silu = 0
    Gelu = 1
    Swiglu = 2
