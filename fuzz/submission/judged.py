"""The inputs our judges read: a case built again in this (the parent) process, on the CPU, where the
oracle's NaN semantics hold. Where this process sees a GPU, B is quantized there and copied back: the
same bytes (the reference's quantizer is integer and power-of-two arithmetic; test_strategies checks a
case builds the same tuple on the CPU and on the tier's device), in milliseconds instead of the seconds a
large official case costs on the CPU or on its way through the input cache's files."""
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
