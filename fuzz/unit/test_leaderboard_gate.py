"""The kernelguard verdict: the bot's classification of real-style files (ours, written here), its rules
answered by the dynamic verdicts, and its own exit code."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.submission import leaderboard_gate

pytest.importorskip("kernelguard", reason="kernelguard is not installed (python -m pip install kernelguard)")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _screen(name: str, profile: str = "default"):
    return leaderboard_gate.screen((EXAMPLES / name).read_text(), profile)


# Every example's screening: (kernelguard verdict, the rules matched); every file not named is clean. One
# example per rule family the bot filters on for this task, and the telemetry rules it only reports.
SCREENINGS = {
    "pointer_replay_output.py": ("fail", {"POINTER_REPLAY", "LAST_CALL_REPLAY", "CONFIG_CACHE_EXPLOIT"}),
    "last_call_replay.py": ("fail", {"LAST_CALL_REPLAY"}),
    "frame_walk_mutation.py": ("fail", {"FRAME_WALK_MUTATION"}),
    "timer_monkeypatch.py": ("fail", {"TIMER_MONKEYPATCH"}),
    "lazy_tensor_output.py": ("reported", {"LAZY_TENSOR"}),
    "unsync_side_streams.py": ("reported", {"UNSYNC_MULTISTREAM"}),
    "graph_capture_replay.py": ("reported", {"CUDA_GRAPH_PYTHON", "WORKSPACE_CACHE"}),
    "torch_compile_reference.py": ("reported", {"TORCH_COMPILE_CACHE"}),
    "torch_compile_reference_wrong.py": ("reported", {"TORCH_COMPILE_CACHE"}),
    # a cast of the fp32 accumulator to bf16 at the end reads to the bot as a precision downgrade
    "accumulates_into_empty.py": ("reported", {"PRECISION_DOWNGRADE"}),
    "input_mutation.py": ("reported", {"PRECISION_DOWNGRADE"}),
    # reaching HIPRTC through importlib (as real files hide ctypes from a grep) reads as dynamic execution
    "hiprtc_ctypes_restype.py": ("reported", {"DYNAMIC_EXECUTION"}),
    # the task's own reference module, which the runner trusts no more than the bot does
    "task_reference_user.py": ("reported", {"TRUSTED_MODULE_IMPORT"}),
}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_each_example_gets_exactly_its_screening(path):
    screening = leaderboard_gate.screen(path.read_text())
    expected_status, expected_rules = SCREENINGS.get(path.name, ("pass", set()))
    status, summary = leaderboard_gate.verdict(screening, {})
    assert (status, {r["rule"] for r in screening.rules}) == (expected_status, expected_rules), summary
    assert screening.should_filter == (status == "fail")
    if status == "fail":
        assert "the leaderboard would filter this file" in summary


def test_a_pointer_keyed_output_replay_is_filtered_and_the_reference_style_file_is_clean():
    replay = _screen("pointer_replay_output.py")
    assert replay.should_filter and replay.classification == "hacked"
    assert {"POINTER_REPLAY", "LAST_CALL_REPLAY"} <= {r["rule"] for r in replay.rules}
    assert replay.rules[0]["severity"] == "critical"  # most severe first
    clean = _screen("correct_reference_style.py")
    assert (clean.classification, clean.should_filter, clean.rules) == ("valid", False, [])
    assert leaderboard_gate.verdict(clean, {})[0] == "pass"


def test_a_graph_replay_is_reported_not_filtered():
    graph = _screen("graph_capture_replay.py")
    status, summary = leaderboard_gate.verdict(graph, {"stale_in_place": "PASS", "stale_recheck": "PASS"})
    assert status == "reported" and not graph.should_filter
    assert "CUDA_GRAPH_PYTHON" in summary and "restructure only" in summary


def test_the_dynamic_verdicts_say_whether_a_flagged_cache_is_a_bug():
    replay = _screen("pointer_replay_output.py")
    status, summary = leaderboard_gate.verdict(replay, {"stale_in_place": "FAIL", "aliasing": "PASS"})
    assert status == "fail" and "the leaderboard would filter this file" in summary
    assert "a bug to fix" in summary and "stale_in_place FAIL" in summary
    _, summary = leaderboard_gate.verdict(replay, {})
    assert "no dynamic verdict ran" in summary
    assert leaderboard_gate.dynamic_answer([{"rule": "HARDCODED_SHAPES", "severity": "low", "evidence": ""}],
                                           {"stale_in_place": "FAIL"}) == ""  # not a claim about state


def test_profiles_are_the_bots_and_a_wrong_one_is_refused():
    assert "default" in leaderboard_gate.profiles() and "strict" in leaderboard_gate.profiles()
    assert _screen("pointer_replay_output.py", "strict").should_filter
    with pytest.raises(ValueError, match="unknown KernelGuard profile"):
        _screen("correct_reference_style.py", "no-such-profile")


@pytest.mark.slow  # one check process
def test_a_file_only_the_bot_would_filter_exits_7(tmp_path):
    command = [sys.executable, "-m", "fuzz.cli", "check", str(EXAMPLES / "pointer_replay_output.py"),
               "--report", str(tmp_path / "r.json"), "--", "-k", "loads or official or kernelguard"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == leaderboard_gate.EXIT_FILTERED, done.stdout[-3000:] + done.stderr[-2000:]
    assert "FAIL kernelguard" in done.stdout or "kernelguard  FAIL" in done.stdout


def test_the_command_line_refuses_an_unknown_profile():
    done = subprocess.run([sys.executable, "-m", "fuzz.cli", "check", "x.py", "--kernelguard-profile", "nope"],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2 and "unknown KernelGuard profile 'nope'" in done.stderr
