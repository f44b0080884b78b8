"""Invariants of the config model, over random shapes and every official shape."""
import pytest
from hypothesis import given, settings, strategies as st

from kernels import configs


def covered_exactly_once(cfg, k):
    seen = [0] * k
    for start, end in cfg.stripes(k):
        assert start < end, f"empty stripe {start}..{end}"
        for i in range(start, end):
            seen[i] += 1
    return all(c == 1 for c in seen)


@settings(max_examples=200, deadline=None)
@given(
    m=st.integers(1, 4096),
    n=st.integers(1, 512).map(lambda x: 16 * x),
    k=st.integers(1, 512).map(lambda x: 32 * x),
    cus=st.sampled_from([80, 132, 256, 304]),
)
def test_every_chosen_config_is_valid_and_tiles_k(m, n, k, cus):
    cfg = configs.choose(m, n, k, cus)
    configs.validate(cfg, m, n, k)
    assert covered_exactly_once(cfg, k)
    assert cfg.grid(m, n)[0] >= 1


@pytest.mark.parametrize("shape", configs.OFFICIAL_SHAPES)
def test_official_shapes_get_valid_configs(shape):
    cfg = configs.choose(*shape)
    configs.validate(cfg, *shape)
    assert covered_exactly_once(cfg, shape[2])


@settings(max_examples=100, deadline=None)
@given(k=st.integers(1, 300).map(lambda x: 32 * x), block_k=st.sampled_from([256, 512]), want=st.integers(1, 32))
def test_align_splits_never_leaves_an_empty_stripe(k, block_k, want):
    per_split, splits = configs.align_splits(k, block_k, want)
    assert per_split % block_k == 0
    assert (splits - 1) * per_split < k <= splits * per_split
    assert splits <= want


def test_validate_rejects_a_stripe_that_skips_k():
    bad = configs.FusedConfig(16, 64, 256, splits=2, split_k=256)
    with pytest.raises(ValueError, match="does not tile K"):
        configs.validate(bad, 16, 64, 1024)
    with pytest.raises(ValueError, match="block_k"):
        configs.validate(configs.FusedConfig(16, 64, 128), 16, 64, 1024)
