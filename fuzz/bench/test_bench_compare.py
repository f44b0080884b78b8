"""The benchmark comparison on synthetic result files: slowdowns beyond the measured noise fail, noise
does not, a path that stopped working fails, entries without a noise estimate are not judged."""
import json

import pytest

from fuzz.bench import compare


def record(path, shape, mean_us, rel_std=0.005, rounds=5):
    return {"path": path, "shape": list(shape), "mean_us": mean_us, "rounds": rounds,
            "noise_rel_std": rel_std if rounds >= compare.MIN_ROUNDS_FOR_NOISE else None}


def doc(*records):
    return {"format": "mxfp4-fuzz-bench/1", "meta": {"device": "synthetic"}, "results": list(records)}


def verdicts(old, new):
    return {(r.path, r.shape): r.verdict for r in compare.compare(old, new)}


S1, S2 = (4, 2880, 512), (16, 2112, 7168)


def test_slowdown_beyond_noise_is_a_regression():
    v = verdicts(doc(record("fused", S1, 10.0)), doc(record("fused", S1, 11.0)))
    assert v == {("fused", S1): "regression"}


def test_slowdown_within_the_floor_is_noise():
    assert verdicts(doc(record("fused", S1, 10.0)), doc(record("fused", S1, 10.15))) == {("fused", S1): "ok"}


def test_noisy_shape_needs_a_bigger_slowdown():
    # 4% per-round spread in both runs: the limit is 3 * sqrt(2) * 4% = 17%
    old, new = doc(record("fused", S2, 20.0, rel_std=0.04)), doc(record("fused", S2, 23.0, rel_std=0.04))
    rows = compare.compare(old, new)
    assert rows[0].verdict == "ok" and rows[0].threshold == pytest.approx(0.1697, abs=1e-3)
    assert verdicts(old, doc(record("fused", S2, 24.0, rel_std=0.04))) == {("fused", S2): "regression"}


def test_speedup_is_reported_not_failed():
    assert verdicts(doc(record("fused", S1, 10.0)), doc(record("fused", S1, 8.0))) == {("fused", S1): "faster"}


def test_broken_missing_new_and_unjudged_entries():
    old = doc(record("fused", S1, 10.0), record("helper", S1, 12.0), record("asm", S1, 9.0, rounds=1))
    new = doc({"path": "fused", "shape": list(S1), "error": "RuntimeError: boom"}, record("asm", S1, 30.0, rounds=1),
              record("a4w4", S1, 9.0))
    assert verdicts(old, new) == {("fused", S1): "broken", ("helper", S1): "missing", ("asm", S1): "unjudged",
                                  ("a4w4", S1): "new"}


def test_main_exit_code(tmp_path, capsys):
    old, slow, same = tmp_path / "old.json", tmp_path / "slow.json", tmp_path / "same.json"
    old.write_text(json.dumps(doc(record("fused", S1, 10.0), record("fused", S2, 20.0))))
    slow.write_text(json.dumps(doc(record("fused", S1, 10.1), record("fused", S2, 25.0))))
    same.write_text(json.dumps(doc(record("fused", S1, 10.1), record("fused", S2, 19.9))))
    assert compare.main([str(old), str(slow)]) == 1
    assert "1 regression" in capsys.readouterr().out
    assert compare.main([str(old), str(same)]) == 0
