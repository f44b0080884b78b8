"""Shuffles: round trips and the explicit index maps of aiter_semantics.md sections 2.2 and 3."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

from reference import e8m0_shuffle, e8m0_unshuffle, shuffle_weight, unshuffle_weight


def random_bytes(rows, cols, seed=0):
    return torch.randint(0, 256, (rows, cols), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


def test_e8m0_shuffle_follows_the_documented_index_map():
    rows, cols = 300, 20
    s = random_bytes(rows, cols)
    out = e8m0_shuffle(s, fill=0xEE)
    sm, sn = out.shape
    assert (sm, sn) == (512, 24)
    flat = out.flatten()
    for r in range(sm):
        for c in range(sn):
            i0, i1, i2 = r // 32, (r % 32) // 16, r % 16
            j3, j4, j5 = c // 8, (c % 8) // 4, c % 4
            expected = s[r, c].item() if r < rows and c < cols else 0xEE
            assert flat[i0 * 32 * sn + j3 * 256 + j5 * 64 + i2 * 4 + j4 * 2 + i1].item() == expected


def test_shuffle_weight_follows_the_documented_index_map():
    n, kb = 48, 64
    w = random_bytes(n, kb)
    flat = shuffle_weight(w).flatten()
    for r in range(n):
        for c in range(kb):
            assert flat[(r // 16) * 16 * kb + (c // 16) * 256 + (r % 16) * 16 + (c % 16)].item() == w[r, c].item()


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 600), cols=st.integers(1, 40), fill=st.integers(0, 255))
def test_e8m0_shuffle_round_trips(rows, cols, fill):
    s = random_bytes(rows, cols, seed=rows * 41 + cols)
    sh = e8m0_shuffle(s, fill=fill)
    assert sh.shape == (-(-rows // 256) * 256, -(-cols // 8) * 8)
    assert torch.equal(e8m0_unshuffle(sh, rows, cols), s)
    padding = e8m0_unshuffle(sh).clone()
    padding[:rows, :cols] = fill
    assert padding.eq(fill).all()


@settings(max_examples=25, deadline=None)
@given(n16=st.integers(1, 12), k64=st.integers(1, 12))
def test_shuffle_weight_round_trips(n16, k64):
    w = random_bytes(16 * n16, 32 * k64, seed=n16 * 13 + k64)
    sh = shuffle_weight(w)
    assert sh.shape == w.shape
    assert torch.equal(unshuffle_weight(sh), w)


def test_shuffles_keep_the_torch_dtype():
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    w = random_bytes(16, 32).view(torch.float4_e2m1fn_x2)
    assert shuffle_weight(w).dtype == torch.float4_e2m1fn_x2
    s = random_bytes(4, 2).view(torch.float8_e8m0fnu)
    assert e8m0_shuffle(s).dtype == torch.float8_e8m0fnu


def test_shuffle_weight_rejects_shapes_it_cannot_tile():
    with pytest.raises(ValueError, match="N % 16"):
        shuffle_weight(random_bytes(24, 32))
    with pytest.raises(ValueError, match="K % 64"):
        shuffle_weight(random_bytes(16, 48))
    with pytest.raises(TypeError, match="1-byte"):
        shuffle_weight(torch.zeros(16, 32, dtype=torch.float32))
