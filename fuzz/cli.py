"""``mxfp4-fuzz``: the suite's command line.

    mxfp4-fuzz check path/to/submission.py [--profile smoke] [--aiter auto|real|emulated|source=PATH] [--report PATH]
                     [--html PATH] [--budget SECONDS] [--timeout SECONDS] [--hard-cap SECONDS]
                     [--fail-on any|runner|latent] [-- extra pytest arguments]

runs ``pytest fuzz/test_submission.py --submission FILE ...`` in this process. The runner's prediction per
popcorn mode prints as soon as it is known; the verdict table, the failure cards and the report path at
the end. The exit code (report_text.final_exit_status): 0 nothing failed; 1 a popcorn mode is predicted
to fail; 7 only KernelGuard's filter; 8 only latent bugs (the runner does not see them today); 6 nothing
failed but something was NOT RUN; 2-5 pytest's own. ``--fail-on runner`` ignores latent bugs, ``latent``
ignores the predicted mode failures.

    mxfp4-fuzz check A.py B.py folder/ [--jobs N] [--out-dir DIR] [--summary PATH] [same options]

checks several files, each in its own process, spread over the GPUs and cores (fuzz/submission/many.py),
and prints a summary table; the exit code is the worst file's, 130 when Ctrl-C or SIGTERM stopped it.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from fuzz.submission.report_text import COMMAND_START_ENV, DEFAULT_FAIL_ON, FAIL_ON

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
TEST_FILE = PACKAGE_ROOT / "fuzz" / "test_submission.py"
AUTOLOAD_ENV = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
# the check's tests are Hypothesis tests; pyproject's addopts name pytest-benchmark's option; the rest is ours
NEEDED_PLUGINS = ("_hypothesis_pytestplugin", "pytest_benchmark.plugin")


def aiter_mode(text: str) -> str:
    """--aiter's value checked (source=PATH made absolute); the import waits until an argument is parsed."""
    from reference.emulation.aiter_modes import parse_mode  # not select: it imports torch

    return parse_mode(text)


def pytest_arguments(args, extra: list) -> list:
    arguments = [
        str(TEST_FILE), "-p", "fuzz.submission.plugin", "--rootdir", str(PACKAGE_ROOT),
        "--submission", str(Path(args.submission).resolve()), "--aiter", args.aiter,
        "--submission-report", str(Path(args.report).resolve()), "--tb=no", "-q", "-rN",
        # no .pytest_cache written into the installed package, and no gc.collect x5 at the session's end
        # (pytest's unraisable-exception plugin: 0.5 s on the 2-core box, for warnings a check never shows)
        "-p", "no:cacheprovider", "-p", "no:unraisableexception",
    ]
    if args.profile:
        arguments += ["--profile", args.profile]
    if args.timeout:
        arguments += ["--submission-timeout", str(args.timeout)]
    if args.hard_cap:
        arguments += ["--submission-hard-cap", str(args.hard_cap)]
    if args.budget is not None:
        arguments += ["--budget", str(args.budget)]
    if args.kernelguard_profile:
        arguments += ["--kernelguard-profile", args.kernelguard_profile]
    return arguments + ["--fail-on", args.fail_on] + extra


def own_plugins_only(extra: list) -> bool:
    """Whether the check's pytest may skip the plugins the host's packages register: always, unless the
    user asked pytest for plugins of their own (-p), xdist's workers (-n: they build their own plugin set) or
    set the variable themselves."""
    plugins = [value for flag, value in zip(extra, extra[1:]) if flag == "-p"]
    plugins += [a[2:] for a in extra if a.startswith("-p") and len(a) > 2]
    asked = any(not p.startswith("no:") for p in plugins) or any(  # -p no:X turns one off: nothing to load
        a in ("-n", "--numprocesses") or a.startswith(("-n", "--numprocesses=", "--dist")) for a in extra)
    return not asked and AUTOLOAD_ENV not in os.environ


def importable(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(name) is not None


def kernelguard_profile(text: str) -> str:
    """--kernelguard-profile checked against the profiles kernelguard ships."""
    from fuzz.submission.leaderboard_gate import profiles

    if text not in profiles():
        raise argparse.ArgumentTypeError(f"unknown KernelGuard profile {text!r}; choose one of {', '.join(profiles())}")
    return text


def many_options(args) -> list:
    """The options each file's own ``mxfp4-fuzz check`` gets from a many-file command."""
    options = ["--aiter", args.aiter, "--fail-on", args.fail_on]
    for flag, value in (("--profile", args.profile), ("--timeout", args.timeout), ("--hard-cap", args.hard_cap),
                        ("--kernelguard-profile", args.kernelguard_profile)):
        if value:
            options += [flag, str(value)]
    if args.budget is not None:
        options += ["--budget", str(args.budget)]
    return options


def stop(signum, frame) -> None:
    """SIGINT (Ctrl-C) and SIGTERM: the workers this process started are killed at once (their process
    groups), then KeyboardInterrupt unwinds the command: pytest reports what it has, the many-file command
    ends its checks and writes its summary. A second signal only kills workers again, so it cannot cut
    that short."""
    runner = sys.modules.get("fuzz.submission.runner")
    if runner is not None:
        runner.kill_all_workers()
    if not STOPPING:
        STOPPING.append(signum)
        raise KeyboardInterrupt


STOPPING: list = []  # the signal that stops this command, once one came


def main(argv=None) -> int:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    from fuzz.host import compile_caches

    # the run's caches first: parsing --aiter imports the emulation, whose gfx950 casts put Triton's cache in
    # a folder of whatever cache is set then (the user's ~/.triton otherwise, not the run's)
    compile_caches.share()
    parser = argparse.ArgumentParser(prog="mxfp4-fuzz", description="Fuzz MXFP4 GEMM submissions for amd-mxfp4-mm.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="run every verdict on one popcorn submission file",
                                epilog="Arguments after -- go to pytest, e.g. -- -k stale --hypothesis-seed=1")
    check.add_argument("submission", nargs="+",
                       help="the submission file (defines custom_kernel(data)); several files or folders: each is "
                            "checked in its own process, in parallel, with a summary table")
    check.add_argument("--profile", choices=("smoke", "ci", "deep", "gpu"), default=None,
                       help="Hypothesis effort (default: smoke on CPU, gpu where a GPU is visible)")
    check.add_argument("--aiter", type=aiter_mode, default="auto", metavar="auto|real|emulated|source=PATH",
                       help="the real aiter package when importable (auto), or force real/emulated; source=PATH: "
                            "aiter's own Python wrappers and Triton kernels from the aiter checkout at PATH over the "
                            "emulation (the ASM GEMM and the compiled layer stay emulated); PATH also stands in for "
                            "the runner's /home/runner/aiter in HIP builds (-I/home/runner/aiter/csrc/include)")
    check.add_argument("--report", default="mxfp4-fuzz-report.json", help="where to write the JSON report (one file)")
    check.add_argument("--html", default=None, metavar="PATH",
                       help="also write the report as one self-contained HTML page (verdicts, failure cards, "
                            "error maps, coverage); several files: one page with the summary and every report")
    check.add_argument("--kernelguard-profile", type=kernelguard_profile, default=None, metavar="PROFILE",
                       help="KernelGuard rule profile of the kernelguard verdict (default: the bot's, 'default')")
    check.add_argument("--fail-on", choices=FAIL_ON, default=DEFAULT_FAIL_ON,
                       help="what exits nonzero: any (default): a predicted popcorn mode failure exits 1, "
                            "KernelGuard's filter alone 7, latent bugs alone (the runner does not see them "
                            "today) 8; runner: only a predicted mode failure or the filter; latent: only latent "
                            "bugs (8). Several files: the worst file's code by the same rule")
    check.add_argument("--jobs", type=int, default=None,
                       help="several files: checks at a time (default: one per GPU on a GPU host, one per core "
                            "elsewhere; more than the GPUs shares them)")
    check.add_argument("--out-dir", default="mxfp4-fuzz-reports",
                       help="several files: the folder for each file's report and log")
    check.add_argument("--summary", default=None, help="several files: the summary JSON (default OUT_DIR/summary.json)")
    check.add_argument("--timeout", type=float, default=None,
                       help="seconds one program of calls may go without progress before it counts as hung "
                            "(default 60 on CPU, 300 on a GPU)")
    check.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                       help="the check's time budget: every verdict ends within it, official first; each says how "
                            "many examples ran and whether the budget cut it short, and one with no example in time "
                            "is NOT RUN, never FAIL (default 80 on the CPU tier, 12 on a GPU, counted from the "
                            "command's start; 0: no budget)")
    check.add_argument("--hard-cap", type=float, default=None,
                       help="seconds a program that keeps progressing may run in all; beyond it its verdict is "
                            "NOT RUN (default 10 x the timeout on CPU; on a GPU the timeout is the cap)")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # after --: for pytest (e.g. -k stale)
    args = parser.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])
    if args.budget is not None and args.budget < 0:
        parser.error(f"--budget must be >= 0 seconds, got {args.budget:g}")
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    from reference.emulation.aiter_modes import name_runner_aiter

    name_runner_aiter(args.aiter)  # before any process of the check starts: they inherit it
    if len(args.submission) > 1 or Path(args.submission[0]).is_dir():
        from fuzz.submission.many import EXIT_INTERRUPTED, check_many

        try:
            return check_many(args.submission, many_options(args), extra, args.out_dir, args.jobs, args.summary,
                              html=args.html)
        except ValueError as error:
            parser.error(str(error))
        except KeyboardInterrupt:  # before the checks started (check_many ends them and writes its summary)
            print("mxfp4-fuzz: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
    args.submission = args.submission[0]
    if Path(args.submission).is_file() and "--collect-only" not in extra:
        from fuzz.host import thread_budget
        from fuzz.submission.runner import prelaunch

        thread_budget.register("mxfp4-fuzz check")  # now, not at pytest's configure: prelaunch sizes by it
        # the worker loads the file while pytest starts, then runs the runner's prediction on a GPU unless the
        # user's pytest arguments may select or reorder the verdicts, or a budget may cut the prediction short
        prelaunch(args.submission, args.aiter, speculate=not extra and not args.budget, timeout=args.timeout)

    import pytest

    arguments = pytest_arguments(args, extra)
    if own_plugins_only(extra):  # third-party plugins a host autoloads cost seconds (2 s on the H200 host)
        os.environ[AUTOLOAD_ENV] = "1"
        arguments = [*(a for name in NEEDED_PLUGINS if importable(name) for a in ("-p", name)), *arguments]
    code = int(pytest.main(arguments))
    if args.html:
        write_html(Path(args.report), Path(args.html))
    return code


def write_html(report: Path, html: Path) -> None:
    """The HTML page of a JSON report; says so (and writes nothing) when the run left no readable report."""
    import json

    from fuzz.report.page import write_report_html

    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError) as error:
        print(f"html        not written: no readable report at {report} ({type(error).__name__}: {error})",
              file=sys.stderr)
        return
    print(f"html        {write_report_html(data, html).resolve()}")


def run() -> None:
    """The command's entry point: ``main``, then an exit that skips the interpreter's teardown (a CUDA
    context's and torch's: up to a second on a GPU host after the table is printed); the exit handlers
    still run."""
    from fuzz.host.process_tree import exit_now
    from fuzz.host.profiling import profile_if_asked

    profile_if_asked("command")
    # when the command began (its process): the time budget counts from it; the report's phases split the rest
    os.environ[COMMAND_START_ENV] = f"{time.time()!r}:{os.getpid()}"
    exit_now(main())


if __name__ == "__main__":
    run()
