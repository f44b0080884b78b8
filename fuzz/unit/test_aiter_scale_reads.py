"""A wrong output whose call ran aiter's own GEMM kernels with EVEN_K=False gets the card line that says aiter's
kernel reads the scale padding there too (fuzz/judge/aiter_scale_reads.py)."""
from fuzz.judge.aiter_scale_reads import padding_lines

TRACE = ["aiter gemm_a16wfp4(x=bf16[1,1600], w=fp4x2[64,800], w_scales=e8m0[64,50], dtype=bf16, y=bf16[1,64]) -> bf16[1,64]",
         "  _gemm_a16wfp4_kernel[grid=(1,)] BLOCK_SIZE_M=4 BLOCK_SIZE_K=512 NUM_KSPLIT=1 EVEN_K=False num_warps=4"]


def test_aiters_own_kernel_with_even_k_false_is_named():
    (line,) = padding_lines(TRACE, 0xFF)
    assert "aiter's own _gemm_a16wfp4_kernel" in line and "0xFF (a NaN E8M0" in line


def test_nothing_to_say_elsewhere():
    assert padding_lines(TRACE, 0) == []  # zero padding: a zero scale harms nothing
    assert padding_lines([TRACE[0], TRACE[1].replace("EVEN_K=False", "EVEN_K=True")], 0xFF) == []
    assert padding_lines([TRACE[1].strip()], 0xFF) == []  # the file's own copy, launched by the file itself
    reduce = "  _gemm_afp4wfp4_reduce_kernel[grid=(1,)] EVEN_K=False"
    assert padding_lines([TRACE[0], reduce], 0xFF) == []
