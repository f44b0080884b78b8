"""Triton's compiles counted in the worker (progress.listen_to_compiles): a GPU check is compile-bound,
and the time profile says how much of it compiling took, and which process compiled what."""
import json
import types

import pytest

from fuzz.submission import progress

knobs = pytest.importorskip("triton.knobs")


@pytest.fixture
def restored_listener():
    earlier = knobs.compilation.listener
    yield
    knobs.compilation.listener = earlier


def _compile(cache_hit: bool, micros=(200_000, [("ttir", 300_000), ("ptx", 400_000)], 100_000)):
    times = knobs.CompileTimes(ir_initialization=micros[0], lowering_stages=micros[1], store_results=micros[2])
    knobs.compilation.listener(src=types.SimpleNamespace(name="gemm_kernel"), metadata={}, metadata_group={},
                               times=times, cache_hit=cache_hit)


def test_misses_are_counted_and_logged_and_an_earlier_listener_still_hears(restored_listener, tmp_path, monkeypatch):
    heard = []
    knobs.compilation.listener = lambda **kwargs: heard.append(kwargs["cache_hit"])
    monkeypatch.setenv(progress.COMPILE_LOG_ENV, str(tmp_path))
    monkeypatch.setenv("MXFP4_FUZZ_ROLE", "helper3")
    progress.listen_to_compiles()
    before = progress.COUNTERS.compiles, progress.COUNTERS.compiling_seconds
    _compile(cache_hit=False)
    _compile(cache_hit=True)
    assert progress.COUNTERS.compiles == before[0] + 1
    assert progress.COUNTERS.compiling_seconds == pytest.approx(before[1] + 1.0)  # 0.2 + 0.3 + 0.4 + 0.1 s
    lines = [json.loads(line) for path in tmp_path.iterdir() for line in path.read_text().splitlines()]
    assert [(line["kernel"], line["hit"], line["role"]) for line in lines] == [
        ("gemm_kernel", False, "helper3"), ("gemm_kernel", True, "helper3")]
    assert lines[0]["seconds"] == pytest.approx(1.0)
    assert heard == [False, True]


def test_a_new_run_counts_from_zero(restored_listener, monkeypatch):
    monkeypatch.delenv(progress.COMPILE_LOG_ENV, raising=False)
    progress.listen_to_compiles()
    _compile(cache_hit=False)
    progress.COUNTERS.start_run(lambda snapshot: None, interval=float("inf"))
    assert (progress.COUNTERS.compiles, progress.COUNTERS.compiling_seconds) == (0, 0.0)
