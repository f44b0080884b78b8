"""Reference timings (pytest-benchmark). Run: pytest fuzz/bench --benchmark-enable.
With the default --benchmark-disable each body runs once, as a smoke test."""
import torch

from reference import exact_gemm_from_inputs, generate_input, quantize_mxfp4


def test_bench_quantize_256x7168(benchmark):
    x = torch.randn(256, 7168, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    packed, scales = benchmark(quantize_mxfp4, x)
    assert packed.shape == (256, 3584) and scales.shape == (256, 224)


def test_bench_exact_gemm_256x3072x1536(benchmark):
    data = generate_input(256, 3072, 1536, seed=0)
    ex = benchmark(exact_gemm_from_inputs, data)
    assert ex.value.shape == (256, 3072)
