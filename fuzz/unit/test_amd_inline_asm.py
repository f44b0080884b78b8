"""gfx950 inline asm compiled for NVIDIA (reference/emulation/amd_inline_asm.py): the CUDA backend's TTIR
stage refuses AMDGCN asm with a named error (LLVM's NVPTX backend would exit the process), PTX asm still
compiles, and the submission runner reads the error as NOT RUN for the tier. The compile test is an AOT
compile for sm_90 in a fresh process: it runs on any machine with the Triton wheel, no GPU needed."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from fuzz.submission import provenance
from reference.emulation import amd_inline_asm

ROOT = Path(__file__).resolve().parents[2]

TTIR = '''
  tt.func public @quantize(%arg0: !tt.ptr<i32>) attributes {noinline = false} {
    %2 = tt.elementwise_inline_asm "v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2" {constraints = "=v,v,v", packed_element = 1 : i32, pure = true} %0, %1 : tensor<64xi32>, tensor<64xf32> -> tensor<64xi32>
    %3 = tt.elementwise_inline_asm "mov.b32 $0, $1;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %0 : tensor<64xi32> -> tensor<64xi32>
'''


def test_amdgcn_asm_is_found_by_mnemonic_or_register_class_and_ptx_is_not():
    assert amd_inline_asm.amdgcn_asm(TTIR) == [("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2", "=v,v,v")]
    odd = TTIR.replace("v_cvt_scalef32_pk_fp4_bf16", "my_macro")  # an unknown mnemonic, AMD registers
    assert [c for _, c in amd_inline_asm.amdgcn_asm(odd)] == ["=v,v,v"]
    assert amd_inline_asm.amdgcn_asm(TTIR.splitlines()[3]) == []  # the PTX line alone


PROBE = textwrap.dedent('''
    import os, sys
    os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, sys.argv[1])
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from reference.emulation import amd_inline_asm

    @triton.jit
    def amd(x_ptr, s_ptr, o_ptr):
        offs = tl.arange(0, 64)
        y = tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2", "=v,v,v",
                                      [tl.load(x_ptr + offs), tl.load(s_ptr + offs)], dtype=tl.uint32,
                                      is_pure=True, pack=1)
        tl.store(o_ptr + offs, y)

    @triton.jit
    def ptx(x_ptr, o_ptr):
        offs = tl.arange(0, 64)
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.uint32,
                                      is_pure=True, pack=1)
        tl.store(o_ptr + offs, y)

    assert amd_inline_asm._patch()
    for fn, sig in ((amd, {"x_ptr": "*u32", "s_ptr": "*fp32", "o_ptr": "*u32"}), (ptx, {"x_ptr": "*u32", "o_ptr": "*u32"})):
        try:
            compiled = triton.compile(ASTSource(fn, sig, {}), target=GPUTarget("cuda", 90, 32))
            print(fn.__name__, "compiled", "ttgir" in compiled.asm)
        except amd_inline_asm.AmdInlineAsmOnNvidia as error:
            print(fn.__name__, "refused", error)
''')


def test_the_cuda_backend_refuses_amdgcn_asm_and_compiles_ptx_asm(tmp_path):
    probe = tmp_path / "probe.py"  # @triton.jit needs its source in a file
    probe.write_text(PROBE)
    done = subprocess.run([sys.executable, str(probe), str(ROOT)], capture_output=True, text=True, timeout=300,
                          env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("amd ", "ptx ")))
    assert lines.get("amd", "").startswith("refused kernel amd uses gfx950 inline asm 'v_cvt_scalef32_pk_fp4_bf16"), \
        done.stdout + done.stderr[-3000:]
    assert lines.get("ptx") == "compiled True", done.stdout + done.stderr[-3000:]


def test_the_runner_reads_the_refusal_as_not_run_for_the_tier():
    assert "AmdInlineAsmOnNvidia" in provenance.TIER_LIMIT_TYPES
    assert "not runnable on this tier" in provenance.TIER_LIMIT_TYPES["AmdInlineAsmOnNvidia"]
