"""gfx950 inline asm in a Triton kernel compiled for a CUDA GPU: a clear "not runnable here", not a crash.

A submission written for the runner may convert with gfx950 instructions through
``tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2", "=v,v,v", ...)``. On the CPU tier
the interpreter runs it with the instruction model (gfx950_asm.py). Compiled for an NVIDIA GPU, the asm
reaches LLVM's NVPTX backend, which has no ``v`` register class: LLVM reports "couldn't allocate output
register for constraint 'v'" and exits the process (measured on the H200, triton 3.6: the worker died
with code 1 in the middle of the call). That is a crash the runner would never see, so a FAIL built on it
would be a false alarm.

Hook: the CUDA backend's ``make_ttir`` stage. Its output still holds every ``tt.elementwise_inline_asm``
op with its asm text and constraints; one written for AMDGCN (a ``v``/``s`` register constraint, or an
AMDGCN mnemonic) raises ``AmdInlineAsmOnNvidia`` naming the instruction, before LLVM sees it. The
submission runner reports that as NOT RUN for this tier. PTX inline asm (``r``, ``l``, ``f``, ``h``
constraints, PTX mnemonics) compiles as before.

Where it does nothing: in the interpreter and on ROCm. ``install()`` is idempotent.
"""
from __future__ import annotations

import re

from reference.emulation import cuda_backend_hook

# tt.elementwise_inline_asm "asm text" {constraints = "=v,v,v", ...}
_INLINE_ASM = re.compile(r'tt\.elementwise_inline_asm\s+"((?:[^"\\]|\\.)*)"[^{]*\{[^}]*constraints\s*=\s*"([^"]*)"')
_KERNEL_NAME = re.compile(r"tt\.func\s+(?:public\s+)?@([\w$.]+)")
_AMDGCN_MNEMONIC = re.compile(r"^\s*(v_|s_|ds_|buffer_|global_|flat_|scratch_|image_)")
_AMDGCN_REGISTER_CLASS = re.compile(r"(^|,)\s*[=&+]*[vsa](,|$)")

_state: dict = {"undo": None}


class AmdInlineAsmOnNvidia(RuntimeError):
    """A kernel's inline asm is AMDGCN code; compiled Triton for NVIDIA cannot compile it."""


def amdgcn_asm(ttir: str) -> list:
    """The AMDGCN inline asm ops of a TTIR module's text: [(asm, constraints)], in order."""
    found = []
    for asm, constraints in _INLINE_ASM.findall(ttir):
        if _AMDGCN_MNEMONIC.search(asm) or _AMDGCN_REGISTER_CLASS.search(constraints):
            found.append((asm, constraints))
    return found


def _wrap(stock_make_ttir):
    def make_ttir(mod, metadata, opt, capability):
        result = stock_make_ttir(mod, metadata, opt, capability)
        text = str(result)
        found = amdgcn_asm(text)
        if found:
            asm, constraints = found[0]
            name = _KERNEL_NAME.search(text)
            raise AmdInlineAsmOnNvidia(
                f"kernel {name.group(1) if name else '?'} uses gfx950 inline asm {asm!r} (constraints {constraints!r}): "
                "compiled Triton for NVIDIA cannot compile it; the CPU tier's interpreter runs it with the gfx950 "
                "instruction model")
        return result

    make_ttir.__wrapped__ = stock_make_ttir
    return make_ttir


def installed() -> bool:
    return _state["undo"] is not None


def _patch() -> bool:
    """Install the hook whatever the tier (``install()`` decides where; tests call this on the CPU)."""
    if installed():
        return True
    undo = cuda_backend_hook.replace("make_ttir", _wrap)
    if undo is None:  # no CUDA backend in this Triton: nothing compiles for NVIDIA either
        return False
    _state["undo"] = undo
    return True


def install() -> bool:
    """On compiled Triton on a CUDA GPU, refuse AMDGCN inline asm with a clear error before LLVM crashes on
    it; elsewhere a no-op. Idempotent; returns whether the hook is in place."""
    return _patch() if cuda_backend_hook.compiled_on_cuda() else installed()


def uninstall() -> None:
    if _state["undo"] is not None:
        _state.pop("undo")()
        _state["undo"] = None
