"""The shared B-side cache (fuzz/search/input_cache.py): a cached build is bitwise the uncached one (in memory and
from disk, contract and beyond-contract K, random scale padding), callers get copies, a corrupt file is
rebuilt, a code edit starts a new cache, and the folder stays under its size."""
from __future__ import annotations

import pytest
import torch

from fuzz.search import input_cache
from fuzz.search.strategies import Case

LARGE = dict(m=3, n=1024, k=1024)  # N * K = 2^20: cached


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(input_cache.ENV, str(tmp_path))
    input_cache.clear_memory()
    yield tmp_path
    input_cache.clear_memory()


def _bits(data):
    return [None if t is None else (t.dtype, t.shape, t.stride(), t.view(torch.uint8).clone()) for t in data]


def _same(first, second):
    assert len(first) == len(second)
    for a, b in zip(_bits(first), _bits(second)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a[:3] == b[:3] and torch.equal(a[3], b[3])


@pytest.mark.parametrize("case", [Case(**LARGE, seed=5), Case(**LARGE, scale_pad_fill="random", seed=6),
                                  Case(m=2, n=1024, k=1056, seed=7),  # K % 64 != 0: no B_shuffle
                                  Case(**LARGE, layout="row_sliced", a_regime="every_class", seed=8)])
def test_a_cached_build_is_bitwise_the_uncached_one(cache, monkeypatch, case):
    fresh, _ = case.build()
    assert list(cache.glob("*/*.pt"))  # stored
    _same(case.build()[0], fresh)  # from memory
    input_cache.clear_memory()
    _same(case.build()[0], fresh)  # from disk
    monkeypatch.setenv(input_cache.ENV, "0")
    _same(case.build()[0], fresh)  # the cache off


def test_small_cases_are_not_cached_and_callers_get_copies(cache):
    Case(m=2, n=64, k=128, seed=1).build()
    assert not list(cache.glob("*/*.pt"))
    case = Case(**LARGE, seed=2)
    first, _ = case.build()
    first[2].view(torch.uint8).fill_(0)  # the caller scribbles on B_q
    second, _ = case.build()
    assert second[2].view(torch.uint8).any() and second[2].data_ptr() != first[2].data_ptr()


def test_a_corrupt_file_is_rebuilt(cache):
    case = Case(**LARGE, seed=3)
    fresh, _ = case.build()
    input_cache.clear_memory()
    (path,) = cache.glob(f"*/{case.id()}.pt")
    path.write_bytes(b"not a tensor file")
    _same(case.build()[0], fresh)


def test_an_edit_to_the_code_that_makes_the_bytes_starts_a_new_cache(cache, monkeypatch):
    before = input_cache.folder()
    monkeypatch.setitem(input_cache._state, "fingerprint", "edited")
    assert input_cache.folder() != before and input_cache.folder().name == "edited"


def test_the_folder_is_kept_under_its_size(cache, monkeypatch):
    monkeypatch.setattr(input_cache, "DISK_BYTES", 5 << 20)  # one large case is about 3.1 MB
    for seed in range(3):
        Case(**LARGE, seed=seed).build()
    sizes = [p.stat().st_size for p in cache.glob("*/*.pt")]
    assert len(sizes) == 1 and sum(sizes) <= 5 << 20
