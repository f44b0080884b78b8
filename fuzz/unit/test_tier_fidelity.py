"""The tier-fidelity catalogue (fuzz/selfcheck/tier_fidelity.py) runs on this tier, and every claim it makes holds: an
entry this tier says it models (or computes the same, or drops) has the gfx950 values in its probe."""
from __future__ import annotations

import json

import pytest

from fuzz.selfcheck import tier_fidelity as tf
from fuzz.testing.fresh_process import run_fresh
from kernels import platform

STATUSES = {"modelled", "same", "dropped", "tolerated", "not modelled", "not measured"}


@pytest.fixture(scope="module")
def rows():
    return {r["name"]: r for r in tf.run_catalogue()}


def test_entries_are_named_once_and_say_every_side(rows):
    assert len(rows) == len(tf.CATALOGUE)
    for entry in tf.CATALOGUE:
        assert entry.construct and entry.gfx950 and entry.basis and entry.h200 and entry.interpreter, entry.name


@pytest.mark.parametrize("name", [e.name for e in tf.CATALOGUE])
def test_every_entry_reports_values_or_why_not(rows, name):
    row = rows[name]
    assert row["status"] in STATUSES and row["suite"]
    assert (row["values"] is not None) != bool(row.get("reason")), row


@pytest.mark.parametrize("name", [e.name for e in tf.CATALOGUE])
def test_a_claim_of_modelled_same_or_dropped_holds_on_this_tier(rows, name):
    row = rows[name]
    if row["status"] not in tf.CHECKED:
        pytest.skip(f"{name} claims nothing checkable on the {platform.detect().tier} tier ({row['status']})")
    assert row["values"] is not None, f"{name} claims '{row['status']}' but its probe cannot run: {row.get('reason')}"
    assert row["gfx950_values"] is not None, f"{name} claims '{row['status']}' without gfx950 values to check"
    assert row["values"] == row["gfx950_values"], (name, row["status"], row["suite"])


def test_a_wrong_value_under_a_modelled_claim_is_caught():
    entry = tf.Entry("broken", "x", lambda: {"y": 1}, "gfx950: y = 2", lambda: {"y": 2}, "test", "-", "-",
                     lambda tier: ("modelled", "a patch that regressed"))
    row = tf.run_entry(entry)
    assert row["status"] == "modelled" and row["agrees"] is False


def test_a_probe_that_cannot_run_says_why():
    def probe():
        raise RuntimeError("no such device\nsecond line\nthe compiler's verdict")

    row = tf.run_entry(tf.Entry("cannot", "x", probe, "-", None, "-", "-", "-", lambda tier: ("not measured", "-")))
    assert row["values"] is None and row["agrees"] is None
    assert row["reason"] == "RuntimeError: no such device ... the compiler's verdict"


@pytest.mark.skipif(not platform.detect().interpreter, reason="the stock interpreter is the cpu tier's")
def test_on_stock_triton_the_patched_entries_lose_their_claim_and_diverge():
    """Without the patches (MXFP4_FUZZ_STOCK_TRITON=1) the entries the patches model must show gfx950's
    values no longer, so a patch that stopped working would be seen by the claim test above."""
    result = run_fresh("import os\nos.environ['MXFP4_FUZZ_STOCK_TRITON'] = '1'\n", """
        import json
        from fuzz.selfcheck import tier_fidelity as tf
        names = ["exp2_of_integers", "bf16_conversions", "bf16_arithmetic", "signed_zero_minmax", "bf16_atomic_add",
                 "scalar_compare_mask"]
        print(json.dumps({r["name"]: [r["status"], r["agrees"]] for r in tf.run_catalogue(names)}))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    import numpy as np

    exact_exp2 = float(np.exp2(np.float32(127.0))) == 2.0 ** 127  # this host's numpy needs no exp2 patch
    assert got == {name: ["not modelled", name == "exp2_of_integers" and exact_exp2] for name in got} and len(got) == 6, got


def test_gfx950_instructions_are_still_what_was_recorded():
    if tf._triton_version() != tf.INSTRUCTIONS_RECORDED_WITH:
        pytest.skip(f"instructions were recorded with triton {tf.INSTRUCTIONS_RECORDED_WITH}; this is {tf.triton.__version__}")
    derived = tf.derive_gfx950()
    if "*" in derived:
        pytest.skip(f"cannot compile for gfx950 here: {derived['*']['error']}")
    assert {name: lost for name, lost in tf.check_instructions(derived).items() if lost} == {}
    assert "too many indices" in derived["rank0_index_mask"].get("error", "")  # triton 3.9 rejects it; the runner did not


def test_the_command_writes_json(tmp_path):
    out = tmp_path / "fidelity.json"
    assert tf.main(["--only", "nan_payload", "fp32_subnormal_arithmetic", "--json", str(out)]) in (0, 1)
    data = json.loads(out.read_text())
    assert data["tier"] == platform.detect().describe()
    assert [r["name"] for r in data["rows"]] == ["fp32_subnormal_arithmetic", "nan_payload"]
