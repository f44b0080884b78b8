"""What the submission report says in words and codes, shared by the plugin (one process) and the merge
of xdist workers' reports (fuzz/submission/merge.py): the test module and verdict names, the exit code of
an inconclusive run, and the terminal lines of launch configurations and tier notes."""
from __future__ import annotations

TEST_MODULE = "test_submission.py"
# Exit codes of a submission run: pytest's (0 every verdict passed, 1 a verdict failed, 2-5 pytest's
# own), and EXIT_NOT_RUN when nothing failed but some verdicts could not run on this tier (too slow for
# the interpreter, needs hipcc / a ROCm GPU, an unmodelled API): inconclusive, not a pass.
EXIT_NOT_RUN = 6
EXIT_LATENT = 8  # the runner's modes are predicted to pass; only latent bugs failed (fuzz/submission/outlook.py)
EXIT_OURS = 9  # a check broke (ERROR: a bug of mxfp4-fuzz, or of the stand-ins), nothing worse was found
# The popcorn modes and the verdict each is read from (the leaderboard folds in kernelguard, which runs last)
MODES = ("test", "benchmark", "leaderboard")
MODE_VERDICT = {"test": "official", "benchmark": "mode_benchmark", "leaderboard": "mode_leaderboard"}
# A FAIL of one of these is a predicted mode failure (a file that does not load fails every mode);
# kernelguard's FAIL is the leaderboard's filter; every other FAIL is a latent bug (outlook.py lists them).
RUNNER_VERDICTS = frozenset({"loads", *MODE_VERDICT.values()})
FAIL_ON = ("any", "runner", "latent")
DEFAULT_FAIL_ON = "any"
COMMAND_START_ENV = "MXFP4_FUZZ_COMMAND_START"  # cli.py's "EPOCH:PID": when the command's process began


def command_start_epoch() -> float | None:
    """The epoch second this process's command began, or None: not started by cli.run, or a value
    inherited from another process (its pid differs)."""
    import os

    stamp, _, pid = os.environ.get(COMMAND_START_ENV, "").partition(":")
    try:
        return float(stamp) if int(pid) == os.getpid() else None
    except ValueError:
        return None


def final_exit_status(exitstatus: int, statuses: dict, fail_on: str = DEFAULT_FAIL_ON) -> int:
    """pytest's exit status for a submission run, given every verdict's status (the serial plugin and the
    xdist merge both end with this; the many-file command ranks files by it). The one rule:

    * pytest's own codes 2-5: as they are;
    * a predicted mode failure (loads, official, mode_benchmark, mode_leaderboard FAIL): 1,
      unless ``fail_on`` is "latent";
    * else the leaderboard's KernelGuard filter: EXIT_FILTERED (7), unless ``fail_on`` is "latent";
    * else a latent bug (any other FAIL): EXIT_LATENT (8), unless ``fail_on`` is "runner";
    * else an ERROR (a check broke: ours, never the file's): EXIT_OURS (9);
    * else something NOT RUN: EXIT_NOT_RUN (inconclusive, not a pass); else 0."""
    from fuzz.submission.leaderboard_gate import EXIT_FILTERED

    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    failed = {v for v, s in statuses.items() if s == "FAIL"}
    errors = "ERROR" in statuses.values()
    if exitstatus not in (0, 1) or (exitstatus == 1 and not failed and not errors):
        return exitstatus  # pytest's own, or a failure outside the verdicts
    if failed & RUNNER_VERDICTS and fail_on != "latent":
        return 1
    if "kernelguard" in failed and fail_on != "latent":
        return EXIT_FILTERED
    if failed - RUNNER_VERDICTS - {"kernelguard"} and fail_on != "runner":
        return EXIT_LATENT
    if errors:
        return EXIT_OURS
    return EXIT_NOT_RUN if "NOT RUN" in statuses.values() else 0


def test_name(nodeid: str) -> str:
    """``correctness`` from ``fuzz/test_submission.py::test_correctness[x]@group`` (xdist's loadgroup
    appends the group)."""
    return nodeid.split("::")[-1].split("[")[0].split("@")[0].removeprefix("test_")


def official_launches_not_fuzzed(verdicts: list) -> list:
    """The launch configurations the official check ran that no fuzzed example of another verdict
    reached (from the report's verdicts): a configuration only the official shapes use is one the
    fuzzing says nothing about. On the CPU tier the official shapes run with N narrowed, so their grid
    classes are the narrowed ones."""
    official = next((v for v in verdicts if v["verdict"] == "official"), None)
    if official is None:
        return []
    fuzzed = {launch["config"] for v in verdicts if v["verdict"] not in ("official", "loads")
              for launch in v.get("launch_configs", [])}
    return [launch["config"] for launch in official.get("launch_configs", []) if launch["config"] not in fuzzed]


def launch_lines(verdicts: list) -> list:
    """The terminal lines of the launch configurations each verdict reached, then the official ones
    fuzzing never reached."""
    lines = []
    for verdict in verdicts:
        for i, launch in enumerate(verdict.get("launch_configs", [])):
            lines.append(f"{'launches' if i == 0 else '':<11} {verdict['verdict']}: {launch['config']} "
                         f"({launch['examples']} examples)")
    official = next((v for v in verdicts if v["verdict"] == "official"), None)
    if official is not None and official.get("launch_configs"):
        missed = official_launches_not_fuzzed(verdicts)
        lines += [f"unfuzzed    {config}: the official shapes ran it, no fuzzed example did" for config in missed]
        if not missed:
            lines.append("unfuzzed    none: fuzzing reached every launch configuration of the official shapes")
    return lines


def build_lines(build: dict) -> list:
    """A builds_gfx950 report entry's lines: its outcome (built, the file's failure, or not built here and why),
    then each kernel's figures."""
    if build["ok"]:
        outcome = "builds"
    elif build.get("not_checked"):
        outcome = f"not built here ({build['not_checked']}): says nothing about the runner"
    else:
        outcome = "does not build"
    # where the runner's own folders were read from here (reference/emulation/runner_paths.py: a stand-in checkout)
    stand_ins = [part for part in (build.get("note") or "").split("; ") if part.startswith("/home/runner/")]
    outcome += "".join(f" ({part})" for part in stand_ins)
    return [f"gfx950      {build['build']}: {outcome}"] + [
        f"              {k['name'].split('(')[0]} line {k['line']}: {k['vgpr']} VGPRs, {k['agpr']} AGPRs, "
        f"{k['sgpr']} SGPRs, occupancy {k['occupancy']}, LDS {k['lds']} B, scratch {k['scratch']} B/lane, "
        f"spills {k['vgpr_spill']} VGPRs {k['sgpr_spill']} SGPRs" for k in build["kernels"]]
