"""Prebuilt code objects a file loads with ``hipModuleLoad``: the CPU model builds a file's HIP from source and
cannot run a gfx950 binary, with one exception: aiter's f4gemm ASM kernels (``hsa/gfx950/f4gemm/*.co`` in
aiter's tree, what ``aiter.gemm_a4w4_asm`` launches), whose arithmetic the emulated aiter models
(``aiter_emu/aiter/ops/gemm_op_a4w4.py``). Real files load them directly from C++ (``hipModuleLoad`` of
``/home/runner/aiter/hsa/gfx950/f4gemm/<name>.co``, ``hipModuleLaunchKernel`` with aiter's ``KernelArgs``
buffer) to skip aiter's Python dispatch; here such a launch runs that model on the argument buffer.

The buffer's layout is aiter's ``KernelArgs`` (csrc/py_itfs_cu/asm_gemm_a4w4.cu at f3be04a12a0c): packed,
every field in a 16-byte slot (pointers padded by ``p2``, 32-bit values by ``p3``), in this order: ptr_D,
ptr_C, ptr_A, ptr_B, alpha, beta, stride_D0, stride_D1, stride_C0, stride_C1, stride_A0, stride_A1,
stride_B0, stride_B1, M, N, K, ptr_ScaleA, ptr_ScaleB, stride_ScaleA0, stride_ScaleA1, stride_ScaleB0,
stride_ScaleB1, log2_k_split. aiter fills A's and B's row strides in fp4 elements (bytes x 2), the scales'
in bytes, and the output's row stride in ``stride_C0`` (it never sets ``stride_D0``), so the kernel's D rows
are ``stride_C0`` bf16 elements apart; the model reads it so.

What a launch covers: the blocks given (``gridDim.x`` tiles of N, ``gridDim.y`` tiles of M, 256 threads each
as aiter launches them), rows below M and columns below N. Not modelled (NOT RUN, naming it): a split-K
launch (``log2_k_split`` > 0 on the split kernels: how the partials meet in D is not visible), a bias
(``beta`` != 0), another block size, ``kernelParams`` instead of the buffer, and every other code object.
The operands are read through raw pointers as the kernel reads them: past what the file allocated, the CPU
may fault where the GPU reads whatever lies there (a crash there is ours to tell apart, never the file's).
"""
from __future__ import annotations

import ctypes
import importlib
import re
import struct

import torch

ARGS_BYTES = 23 * 16 + 4  # 23 slots of 16 bytes, then log2_k_split
# field -> (slot, struct format)
FIELDS = {"ptr_D": (0, "Q"), "ptr_C": (1, "Q"), "ptr_A": (2, "Q"), "ptr_B": (3, "Q"), "alpha": (4, "f"),
          "beta": (5, "f"), "stride_C0": (8, "I"), "stride_A0": (10, "I"), "stride_B0": (12, "I"), "M": (14, "I"),
          "N": (15, "I"), "K": (16, "I"), "ptr_ScaleA": (17, "Q"), "ptr_ScaleB": (18, "Q"),
          "stride_ScaleA0": (19, "I"), "stride_ScaleB0": (21, "I"), "log2_k_split": (23, "i")}
AITER_F4GEMM = re.compile(r"(?:^|/)hsa/gfx950/f4gemm/(?P<base>f4gemm_bf16_per1x32Fp4_\w+?)\.co$")
THREADS = 256  # aiter launches every f4gemm kernel with 256 threads (4 waves)
LAUNCHES = [0]  # launches through ctypes (hiprtc.py); the C++ path counts in the model library's own counter


def _asm():
    """The emulated aiter's ASM model, loaded apart from whichever aiter the file imports (select.py)."""
    from reference.emulation import select

    return importlib.import_module(f"{select.load_emulation().__name__}.ops.gemm_op_a4w4")


class NotModelled(Exception):
    """What of a code object or its launch the model does not run (the call is NOT RUN, naming it)."""


def kernel_of(path: str):
    """The emulated aiter's description (``AsmKernel``) of the f4gemm code object at ``path``; NotModelled for
    any other code object."""
    match = AITER_F4GEMM.search(path.replace("\\", "/"))
    kernel = next((k for k in _asm().ASM_KERNELS if match and k.name == f"_ZN5aiter{len(match['base'])}"
                   f"{match['base']}E"), None)
    if kernel is None:
        raise NotModelled(f"hipModuleLoad({path!r}): a prebuilt code object; the CPU model of gfx950 runs none but "
                          "aiter's f4gemm ASM kernels (hsa/gfx950/f4gemm/*.co)")
    return kernel


def has_function(path: str, name: str) -> bool:
    """Whether the code object at ``path`` holds the kernel ``name`` (its one kernel, by its mangled name)."""
    return kernel_of(path).name == name


def read_args(buffer: bytes) -> dict:
    if len(buffer) < ARGS_BYTES:
        past = [name for name, (slot, _) in FIELDS.items() if 16 * slot + 4 > len(buffer)]
        raise NotModelled(f"an f4gemm launch with a {len(buffer)}-byte argument buffer, where aiter's KernelArgs has "
                          f"{ARGS_BYTES} (every field in a 16-byte slot, asm_gemm_a4w4.cu): the kernel reads "
                          f"{', '.join(past)} past it, whatever the runtime's argument segment holds there (on the "
                          "runner likely a wrong result or a fault), which the model cannot say")
    return {name: struct.unpack_from("<" + kind, buffer, 16 * slot)[0] for name, (slot, kind) in FIELDS.items()}


def _bytes_at(address: int, offsets: torch.Tensor) -> torch.Tensor:
    """The bytes at ``address + offsets``, read as the kernel reads them (raw memory, no bounds)."""
    low, high = int(offsets.min()), int(offsets.max()) + 1
    memory = torch.frombuffer(bytearray(ctypes.string_at(address + low, high - low)), dtype=torch.uint8)
    return memory[offsets - low]


def launch(path: str, name: str, buffer: bytes, grid: tuple, block: tuple) -> None:
    """Run one ``hipModuleLaunchKernel`` of aiter's f4gemm kernel ``name`` from ``path`` with the argument
    buffer ``buffer``: D = alpha * A @ B^T over the tiles the grid covers, written through ptr_D."""
    asm = _asm()
    kernel = kernel_of(path)
    if kernel.name != name:
        raise NotModelled(f"{name} is not the kernel of {path}")
    if block[0] * block[1] * block[2] != THREADS:
        raise NotModelled(f"an f4gemm launch with {block[0] * block[1] * block[2]} threads a block (aiter launches "
                          f"{THREADS}): what the kernel does then is not modelled")
    a = read_args(buffer)
    if kernel.split_k and a["log2_k_split"] > 0:
        raise NotModelled("a split-K launch of the f4gemm ASM kernel (log2_k_split > 0): how its partials are "
                          "summed into D is not modelled")
    if a["beta"] != 0.0:
        raise NotModelled("an f4gemm launch with beta != 0 (a bias through ptr_C): not modelled")
    rows = min(a["M"], grid[1] * kernel.tile_m)
    cols = min(a["N"], grid[0] * kernel.tile_n)
    k = a["K"]
    if rows <= 0 or cols <= 0 or k <= 0:
        return
    k_bytes, groups = k // 2, -(-k // asm.SCALE_GROUP)
    a_codes = _bytes_at(a["ptr_A"], asm._weight_offsets(rows, k_bytes, a["stride_A0"] // 2, False, "cpu"))
    b_codes = _bytes_at(a["ptr_B"], asm._weight_offsets(cols, k_bytes, a["stride_B0"] // 2, kernel.bpreshuffle, "cpu"))
    a_scales = _bytes_at(a["ptr_ScaleA"], asm._scale_offsets(rows, groups, a["stride_ScaleA0"], "cpu"))
    b_scales = _bytes_at(a["ptr_ScaleB"], asm._scale_offsets(cols, groups, a["stride_ScaleB0"], "cpu"))
    result = asm.asm_arithmetic(a_codes, a_scales, b_codes, b_scales, k, a["alpha"], 0.0, None)
    stride = a["stride_C0"]
    span = ((rows - 1) * stride + cols) * 2
    out = torch.frombuffer((ctypes.c_char * span).from_address(a["ptr_D"]), dtype=torch.bfloat16)
    out.as_strided((rows, cols), (stride, 1)).copy_(result)
