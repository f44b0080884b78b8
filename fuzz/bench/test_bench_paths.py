"""Timings of every kernel path on the six official benchmark shapes: pytest-benchmark drives the calls,
device events time them (fuzz.bench.harness), each output is checked against the oracle's bound.

On a GPU:  pytest fuzz/bench/test_bench_paths.py --benchmark-enable --bench-json results.json
With the default --benchmark-disable each body runs once (a smoke, no noise estimate). On the CPU tier
the official shapes skip (interpreter timings say nothing about GPU performance); a tiny shape proves
the harness works everywhere.
"""
import json

import pytest
import torch

from fuzz.bench import compare, harness
from kernels import fused
from kernels.dispatch import DEFAULT_PATHS
from kernels.platform import detect
from reference import generate_input

ROUNDS, CALLS = 5, 20
PATHS = {p.name: p for p in DEFAULT_PATHS}


@pytest.fixture(scope="module")
def copy_bandwidth():
    return harness.measure_copy_bandwidth(detect().device) if detect().device == "cuda" else None


@pytest.fixture(scope="module", autouse=True)
def bench_json(request, copy_bandwidth):
    """Writes this module's results where --bench-json says (an option conftest registers)."""
    yield
    target = request.config.getoption("--bench-json", default=None)
    if target and harness.RESULTS:
        harness.save_results(target, meta=harness.environment(copy_bandwidth))


@pytest.fixture(scope="module")
def aiter_selected(request):
    from reference.emulation.select import use_aiter

    return use_aiter(request.config.getoption("--aiter", default="auto"))


@pytest.mark.benchmark_suite
@pytest.mark.parametrize("shape", harness.BENCH_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("path_name", list(PATHS))
def test_bench_official_shape(benchmark, request, path_name, shape, copy_bandwidth):
    if detect().interpreter:
        pytest.skip("Triton interpreter: CPU timings say nothing about GPU performance (run on a GPU)")
    request.getfixturevalue("aiter_selected")  # only now: selecting aiter imports it for the whole session
    path = PATHS[path_name]
    ok, why = path.requirements()
    if not ok:
        pytest.skip(why)
    bench = harness.CallBench(path, generate_input(*shape, seed=0, device=detect().device))
    bench.run(calls=0)  # warm-up (compiles, caches) outside the statistics
    benchmark.group = "x".join(map(str, shape))
    benchmark.pedantic(bench.call, setup=bench.setup, rounds=ROUNDS * CALLS)
    record = harness.result_record(bench, shape, ROUNDS, copy_bandwidth)
    harness.RESULTS.append(record)
    benchmark.extra_info.update({k: record[k] for k in ("mean_us", "min_us", "roofline_us", "threshold", "config")})
    if detect().is_gfx950:
        benchmark.extra_info["aiter_us_mi355x"] = record["aiter_us_mi355x"]
    assert record["outside_bound"] == 0


def test_harness_times_checks_and_saves_a_tiny_shape(tmp_path):
    device = detect().device
    bandwidth = harness.measure_copy_bandwidth(device, nbytes=8 << 20, samples=3)
    shape = (4, 64, 256)
    record = harness.bench_path(fused.PATH, shape, rounds=3, calls_per_round=1, flush_bytes=1 << 20, bandwidth=bandwidth)
    assert record["n"] == 3 and record["rounds"] == 3 and min(record["round_means_us"]) > 0
    assert record["outside_bound"] == 0 and record["path"] == "fused" and record["config"]
    assert record["roofline_us"] == pytest.approx(harness.moved_bytes(*shape) / bandwidth * 1e6)
    assert record["threshold"] >= compare.NOISE_FLOOR
    saved = harness.save_results(tmp_path / "r.json", [record], harness.environment(bandwidth))
    assert json.loads((tmp_path / "r.json").read_text()) == saved
    assert [r.verdict for r in compare.compare(saved, saved)] == ["ok"]


def test_setup_clones_the_inputs_and_flushes():
    data = generate_input(4, 64, 256, seed=0, device=detect().device)
    bench = harness.CallBench(fused.PATH, data, flush_bytes=1 << 20)
    bench._flush.fill_(7)
    (clone,), kwargs = bench.setup()
    assert kwargs == {} and bool((bench._flush == harness.FLUSH_FILL).all())
    for original, copy in zip(data, clone):
        assert copy.data_ptr() != original.data_ptr() and torch.equal(copy.view(torch.uint8), original.view(torch.uint8))


def test_moved_bytes_counts_a_b_scales_and_y():
    # A 4*512*2 + B codes 2880*512/2 + B scales 2880*512/32 + Y 4*2880*2
    assert harness.moved_bytes(4, 2880, 512) == 4096 + 737280 + 46080 + 23040


def test_noise_is_the_spread_of_round_means_with_a_floor():
    quiet = harness.timing_stats([10.0, 10.0, 10.1, 10.1, 9.9, 9.9], rounds=3)
    assert quiet["round_means_us"] == pytest.approx([10.0, 10.1, 9.9])
    assert quiet["noise_rel_std"] == pytest.approx(0.01)
    assert quiet["threshold"] == pytest.approx(0.03)
    flat = harness.timing_stats([5.0] * 6, rounds=3)
    assert flat["threshold"] == compare.NOISE_FLOOR
    assert harness.timing_stats([5.0, 6.0], rounds=2)["threshold"] is None  # too few rounds to say


def test_aiter_table_is_the_contracts():
    assert set(harness.AITER_US_MI355X) == set(harness.BENCH_SHAPES)
    assert harness.geomean(harness.AITER_US_MI355X.values()) == pytest.approx(11.499, abs=1e-3)


def test_gpu_run_smoke_writes_its_report(tmp_path, monkeypatch, request):
    from fuzz.bench import gpu_run

    monkeypatch.setenv("OUT", str(tmp_path))
    assert gpu_run.main(["--smoke", "--parts", "fuzz,compile,bench", "--subjects", "fused", "--paths", "fused",
                         "--fuzz-seconds", "1", "--aiter", request.config.getoption("--aiter", default="auto")]) == 0
    report = json.loads((tmp_path / "gpu_run.json").read_text())
    fuzzed = report["fuzz"]["fused"]
    assert fuzzed["examples"] > 0 and fuzzed["failed"] == fuzzed["errored"] == 0
    # where the time went: every phase of a steady example timed, and the value draws seen
    steady = fuzzed["examples"] > fuzzed["compile_examples"]  # on a GPU a 1 s run may compile throughout
    assert set(fuzzed["steady_phase_seconds"]) == ({"build", "subject", "oracle"} if steady else set())
    assert fuzzed["value_stream"] == ("mt19937" if gpu_run.platform.detect().device == "cpu" else "counter")
    assert fuzzed["value_draw_seconds"] >= 0 and all(v >= 0 for v in fuzzed["steady_phase_seconds"].values())
    from fuzz.search import strategies

    assert strategies.regime_values.__name__ == "regime_values"  # the timing wrapper was taken off again
    assert report["compile"]["shapes"] == 5 and report["compile"]["within_bound"]
    assert [r["outside_bound"] for r in report["bench"]["records"]] == [0]
    assert json.loads((tmp_path / "bench.json").read_text())["results"] == report["bench"]["records"]


def test_fuzz_loop_counts_wrong_answers_and_errors_with_the_suites_judge():
    from fuzz.search import profiles
    from fuzz.bench import gpu_run
    from fuzz.subjects.kernel_subjects import Subject
    from kernels.path import RunInfo

    def ones(data):
        return torch.ones(data[0].shape[0], data[3].shape[0], dtype=torch.bfloat16), RunInfo("ones")

    def crashes(data):
        raise RuntimeError("boom")

    with profiles.shape_caps_of("smoke"):
        wrong = gpu_run.fuzz_subject(Subject("ones", "ones", lambda: (True, ""), ones), 0.5, seed=1)
        crashed = gpu_run.fuzz_subject(Subject("crash", "crash", lambda: (True, ""), crashes), 0.2, seed=1)
    assert wrong["examples"] > 0 and wrong["failed"] == wrong["examples"]
    assert wrong["failures"][0].startswith("FAIL product: subject ones")
    assert crashed["errored"] > 0 and crashed["examples"] == 0 and "boom" in crashed["errors"][0]["error"]
    assert len(crashed["errors"]) <= gpu_run.KEEP


def test_junit_totals_and_skip_reasons(tmp_path):
    from fuzz.bench import gpu_run

    (tmp_path / "j.xml").write_text(
        '<testsuites><testsuite><testcase classname="a" name="t1" time="1.5"/>'
        '<testcase classname="a" name="t2" time="0.1"><skipped message="no GPU here"/></testcase>'
        '<testcase classname="b" name="t3" time="2"><failure message="boom">trace</failure></testcase>'
        '</testsuite></testsuites>')
    r = gpu_run.parse_junit(tmp_path / "j.xml")
    assert (r["passed"], r["failed"], r["skipped"]) == (1, 1, 1)
    assert r["skips"] == {"no GPU here": ["a::t2"]} and r["failures"][0]["test"] == "b::t3"
