"""The inputs our judges read: a case built again in this (the parent) process, on the CPU, where the
oracle's NaN semantics hold. Where this process sees a GPU, B is quantized there and copied back: the
same bytes (the reference's quantizer is integer and power-of-two arithmetic; test_strategies checks a
case builds the same tuple on the CPU and on the tier's device), in milliseconds instead of the seconds a
large official case costs on the CPU or on its way through the input cache's files. The exact product
is computed there too (``exact_product``) and comes back to the CPU."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _quantize_device() -> str:
    from kernels.platform import detect

    return detect().device


def judged_inputs(case) -> tuple:
    """``case.build()`` on the CPU, B quantized on this process's fastest device: (data, meta). A case of the
    counter stream (the runner's shapes on a GPU: value_streams.runner_case_stream) is drawn on that device
    too, where its hash is fast, and copied back bit for bit (the same tensors on every device); its meta is
    the device build's."""
    device = _quantize_device()
    if case.stream == "counter" and device != "cpu":
        data, meta = case.build(device, quantize_on=device)
        return tuple(None if t is None else t.cpu() for t in data), meta
    return case.build("cpu", quantize_on=device)


def exact_product(data, **kw):
    """``exact_gemm_from_inputs(data, **kw)`` computed on this process's fastest device, every field back on
    the CPU. The oracle's quantizer gives the same bits on every device (checked with every special value
    on a GPU: fuzz/unit/test_aiter_vectorized.py) and float64 products of MXFP4 values are exact, so only
    the order of the float64 sums may differ, which the bound covers (reference.oracle.gemm). On a GPU
    host the dequantized float64 operands and their two products took most of a check's judging
    (0.1 to 0.4 s per runner-shape output on the CPU, about 34 outputs in a prediction)."""
    import dataclasses

    import torch

    from reference import exact_gemm_from_inputs

    device = _quantize_device()
    if device == "cpu":
        return exact_gemm_from_inputs(data, **kw)
    exact = exact_gemm_from_inputs(tuple(None if t is None else t.to(device) for t in data), **kw)
    return dataclasses.replace(exact, **{f.name: getattr(exact, f.name).cpu() for f in dataclasses.fields(exact)
                                         if isinstance(getattr(exact, f.name), torch.Tensor)})
