"""Where a check's seconds went (fuzz.bench.time_to_verdict.summarize): the loads verdict's wait for the
worker to execute the file is loading, not judging (it runs no program, so all of it looked like judging)."""
from fuzz.bench import time_to_verdict


def test_the_loads_wait_is_loading_and_judging_is_what_the_checks_spent_outside_programs():
    report = {"verdicts": [], "time_profile": {"worker_start": 1.0, "tests": {
        "loads": {"seconds": 1.3, "checks": {"pass": 1.3}, "program_wall": 0.0, "judging": 1.3, "hypothesis": 0.0},
        "official": {"seconds": 2.4, "checks": {"pass": 2.4}, "program_wall": 2.3, "judging": 0.1, "hypothesis": 0.0,
                     "worker": {"call": 1.5, "compiling": 0.9, "compiles": 4}},
        "correctness": {"seconds": 0.6, "checks": {"pass": 0.6}, "program_wall": 0.3, "judging": 0.3,
                        "hypothesis": 0.04, "worker": {"call": 0.2}},
    }}}
    where = time_to_verdict.summarize(report)["where"]
    assert where["loading"] == 1.3
    assert where["judging"] == 0.4
    assert (where["compiling"], where["compiles"], where["calls"]) == (0.9, 4, 1.7)


def test_the_steady_state_estimate_is_jobs_over_the_mean_check():
    rows = [{"seconds": 10.0}, {"seconds": 20.0}, {"seconds": 15.0}]
    assert time_to_verdict.steady_rate(rows, 8) == 8 * 60 / 15.0
    assert time_to_verdict.steady_rate([], 8) == 0.0


def test_a_checks_compiles_are_listed_in_the_order_they_ended_cache_hits_left_out(tmp_path):
    import json

    lines = {"101.jsonl": [{"pid": 101, "role": "worker", "kernel": "_quant", "end": 1005.5, "seconds": 0.8,
                            "hit": False, "specialization": "{'M': 32}"},
                           {"pid": 101, "role": "worker", "kernel": "_quant", "end": 1006.0, "seconds": 0.0,
                            "hit": True, "specialization": "{'M': 32}"}],
             "102.jsonl": [{"pid": 102, "role": "helper", "kernel": "_gemm", "end": 1002.25, "seconds": 1.1,
                            "hit": False, "specialization": "x" * 500}]}
    for name, entries in lines.items():
        (tmp_path / name).write_text("".join(json.dumps(e) + "\n" for e in entries) + '{"cut by a kill')
    listed = time_to_verdict.compiled(tmp_path, launched=1000.0)
    assert [(c["at"], c["role"], c["kernel"], c["seconds"]) for c in listed] == [(2.25, "helper", "_gemm", 1.1),
                                                                               (5.5, "worker", "_quant", 0.8)]
    assert len(listed[0]["specialization"]) == 160
    assert time_to_verdict.compiled(tmp_path / "absent", launched=1000.0) == []
