"""The judge's exact product computed on the fastest device (fuzz.submission.judged.exact_product): on a
GPU the same product as on the CPU, every field back on the CPU."""
import dataclasses

import pytest
import torch

from fuzz.search.strategies import Case
from fuzz.submission import judged
from reference import exact_gemm_from_inputs


@pytest.mark.parametrize("m, n, k", [(8, 256, 7168), (33, 128, 512)])
def test_the_exact_product_is_the_cpus_whatever_device_computes_it(m, n, k):
    data, _ = judged.judged_inputs(Case(m, n, k))
    a = data[0].clone()
    a.view(torch.int16).view(-1)[::101] = 0x7FC0  # NaNs: the NaN rule's codes must match too
    data = (a, *data[1:])
    want = exact_gemm_from_inputs(data)
    got = judged.exact_product(data)
    for field in dataclasses.fields(want):
        w, g = getattr(want, field.name), getattr(got, field.name)
        if isinstance(w, torch.Tensor):
            assert g.device.type == "cpu", field.name
            # exact: each product of two MXFP4 values fits float64, and these rows' scales span few binades,
            # so the float64 sums are exact in any order
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True, msg=field.name)
        else:
            assert w == g, field.name
