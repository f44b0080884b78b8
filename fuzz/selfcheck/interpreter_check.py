"""Interpreted vs compiled Triton, bit for bit, on the operations the interpreter patches touch.

The same tiny kernels run compiled on a GPU (``record``: writes their outputs) and in the patched
interpreter on the CPU (``compare``: runs them and writes a table against the recorded outputs). Inputs
are deterministic, so the two halves can run on different machines:

    python -m fuzz.selfcheck.interpreter_check record --out compiled.npz          # on a GPU (the device tool: H200)
    python -m fuzz.selfcheck.interpreter_check compare compiled.npz --json table.json   # on the CPU tier

Tables: every bf16 bit pattern widened to fp32 and to fp16; fp32 patterns at every bf16 rounding
boundary (each bf16 value and +1, half-1, half, half+1, next-1 ulps of fp32 above it: ties, subnormals,
overflow, NaN and Inf included) narrowed to bf16 with the default and with ``rtz`` rounding; fp16 and
fp64 and int32 to bf16; bf16 arithmetic (* + maximum < and a max reduction) on pairs of specials and random values; and
Python ``not``/``and`` on tensors. NaN outputs are compared as NaN (a payload may differ by backend:
NVIDIA's conversions return the canonical 0x7FFF); everything else must be identical.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch

from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before the @triton.jit below: compiled on a GPU, patched interpreter on a CPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

BLOCK = 1024


@triton.jit
def _convert(x_ptr, y_ptr, n, OUT: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if MODE == 1:
        y = x.to(OUT, fp_downcast_rounding="rtz")
    else:
        y = x.to(OUT)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _bf16_binary(x_ptr, z_ptr, y_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    if OP == 0:
        y = x * z
    elif OP == 1:
        y = x + z
    elif OP == 2:
        y = tl.maximum(x, z)
    else:
        y = (x < z).to(tl.bfloat16)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _bf16_row_max(x_ptr, y_ptr, COLS: tl.constexpr):
    # a max is exact in any order (a sum is not: its order is the backend's, so it has no bit-exact table)
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * COLS + tl.arange(0, COLS))
    tl.store(y_ptr + row, tl.max(x, axis=0))


@triton.jit
def _logic(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    positive = x > 0
    small = (x < 1) and (x > -1)
    y = (not positive).to(tl.int8) + 2 * small.to(tl.int8)
    tl.store(y_ptr + offs, y, mask=mask)


# ---------------------------------------------------------------------------------------------------
# Inputs (deterministic)


def _all_bf16() -> torch.Tensor:
    return torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)


def _fp32_rounding_boundaries() -> torch.Tensor:
    base = torch.arange(65536, dtype=torch.int64) << 16
    offsets = torch.tensor([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=torch.int64)
    bits = (base[:, None] + offsets[None, :]).reshape(-1)
    return bits.to(torch.int64).bitwise_and(0xFFFFFFFF).to(torch.int32).view(torch.float32)


def _specials_and_random_pairs() -> tuple:
    specials = torch.tensor([0.0, -0.0, 1.0, -1.0, 1.5, 2.0**-126, 2.0**-130, -2.0**-133, 3.3895e38, float("inf"),
                             -float("inf"), float("nan"), 65504.0, 1e-38, 7.0], dtype=torch.float32).to(torch.bfloat16)
    gen = torch.Generator().manual_seed(0)
    random = (torch.randn(4096, generator=gen) * torch.exp2(torch.randint(-140, 120, (4096,), generator=gen).float())
              ).to(torch.bfloat16)
    values = torch.cat([specials, random])
    x = values.repeat_interleave(len(specials))
    z = torch.cat([specials.repeat(len(specials)), random.flip(0)[: len(x) - len(specials) ** 2]])
    return x[: len(z)], z


def _int32_values() -> torch.Tensor:
    around = torch.tensor([2**k for k in range(31)], dtype=torch.int64)
    near = (around[:, None] + torch.arange(-300, 301)[None, :]).reshape(-1)
    near = near[(near >= -2**31) & (near < 2**31)]
    return torch.cat([near, -near]).to(torch.int32)


def cases() -> dict:
    """name -> (kernel, inputs, launch constexprs, output dtype)."""
    bf16 = _all_bf16()
    pairs = _specials_and_random_pairs()
    gen = torch.Generator().manual_seed(1)
    sums = (torch.randn(64, 256, generator=gen) * torch.exp2(torch.randint(-130, 100, (64, 1), generator=gen).float())
            ).to(torch.bfloat16)
    return {
        "bf16_to_fp32": (_convert, (bf16,), {"OUT": tl.float32, "MODE": 0}, torch.float32),
        "bf16_to_fp16": (_convert, (bf16,), {"OUT": tl.float16, "MODE": 0}, torch.float16),
        "fp16_to_bf16": (_convert, (bf16.view(torch.float16),), {"OUT": tl.bfloat16, "MODE": 0}, torch.bfloat16),
        "fp32_to_bf16": (_convert, (_fp32_rounding_boundaries(),), {"OUT": tl.bfloat16, "MODE": 0}, torch.bfloat16),
        "fp32_to_bf16_rtz": (_convert, (_fp32_rounding_boundaries(),), {"OUT": tl.bfloat16, "MODE": 1}, torch.bfloat16),
        "fp64_to_bf16": (_convert, (_fp32_rounding_boundaries().double() * (1 + 2.0**-30),),
                         {"OUT": tl.bfloat16, "MODE": 0}, torch.bfloat16),
        "int32_to_bf16": (_convert, (_int32_values(),), {"OUT": tl.bfloat16, "MODE": 0}, torch.bfloat16),
        "bf16_mul": (_bf16_binary, pairs, {"OP": 0}, torch.bfloat16),
        "bf16_add": (_bf16_binary, pairs, {"OP": 1}, torch.bfloat16),
        "bf16_maximum": (_bf16_binary, pairs, {"OP": 2}, torch.bfloat16),
        "bf16_less": (_bf16_binary, pairs, {"OP": 3}, torch.bfloat16),
        "bf16_row_max": (_bf16_row_max, (sums,), {"COLS": 256}, torch.bfloat16),
        "not_and_on_tensors": (_logic, (pairs[0].float(),), {}, torch.int8),
    }


def run_case(kernel, inputs, constexprs, out_dtype, device) -> torch.Tensor:
    inputs = [t.to(device) for t in inputs]
    if kernel is _bf16_row_max:
        y = torch.empty(inputs[0].shape[0], dtype=out_dtype, device=device)
        kernel[(inputs[0].shape[0],)](inputs[0], y, **constexprs)
        return y.cpu()
    n = inputs[0].numel()
    y = torch.empty(n, dtype=out_dtype, device=device)
    kernel[(triton.cdiv(n, BLOCK),)](*inputs, y, n, BLOCK=BLOCK, **constexprs)
    return y.cpu()


def _bits(t: torch.Tensor) -> np.ndarray:
    width = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(width).numpy()


def compare(interpreted: torch.Tensor, compiled_bits: np.ndarray, dtype: torch.dtype) -> dict:
    got = _bits(interpreted)
    want = compiled_bits.astype(got.dtype)
    same = got == want
    if dtype.is_floating_point:
        nan_got = torch.isnan(interpreted).numpy()
        nan_want = torch.isnan(torch.from_numpy(want).view(dtype)).numpy()
        both_nan = nan_got & nan_want & ~same
    else:
        both_nan = np.zeros_like(same)
    wrong = ~same & ~both_nan
    first = [{"index": int(i), "interpreted": hex(int(got[i]) & (2 ** (8 * got.itemsize) - 1)),
              "compiled": hex(int(want[i]) & (2 ** (8 * want.itemsize) - 1))} for i in np.flatnonzero(wrong)[:8]]
    return {"inputs": int(got.size), "bit_exact": int(same.sum()), "nan_payload_differs": int(both_nan.sum()),
            "wrong": int(wrong.sum()), "first_wrong": first}


def record(out: str) -> dict:
    if not torch.cuda.is_available():
        raise SystemExit("record needs a GPU (compiled Triton); run it on the device tool")
    arrays = {}
    for name, (kernel, inputs, constexprs, dtype) in cases().items():
        arrays[name] = _bits(run_case(kernel, inputs, constexprs, dtype, "cuda"))
    np.savez_compressed(out, **arrays)
    return {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
            "cases": {k: int(v.size) for k, v in arrays.items()}}


def compare_file(path: str) -> dict:
    if not triton.knobs.runtime.interpret:
        raise SystemExit("compare runs the interpreter: use a machine without a GPU (or TRITON_INTERPRET=1)")
    recorded = np.load(path)
    table = {}
    for name, (kernel, inputs, constexprs, dtype) in cases().items():
        if name not in recorded:
            table[name] = {"missing": "not in the recorded file"}
            continue
        table[name] = compare(run_case(kernel, inputs, constexprs, dtype, "cpu"), recorded[name], dtype)
    return {"triton_interpreted": triton.__version__, "patches": triton_interpreter.installed(), "tables": table}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.selfcheck.interpreter_check", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the kernels compiled on a GPU and save their outputs")
    rec.add_argument("--out", required=True)
    cmp_ = sub.add_parser("compare", help="run them in the (patched) interpreter against a recorded file")
    cmp_.add_argument("recorded")
    cmp_.add_argument("--json", help="write the table here")
    args = parser.parse_args(argv)
    if args.command == "record":
        print(json.dumps(record(args.out), indent=1))
        return 0
    result = compare_file(args.recorded)
    text = json.dumps(result, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    for name, row in result["tables"].items():
        print(f"{name:22s} " + ", ".join(f"{k}={v}" for k, v in row.items() if k != "first_wrong"))
    return 0 if all(row.get("wrong", 1) == 0 for row in result["tables"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
