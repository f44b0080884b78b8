"""Suite-wide pytest configuration: options (one place, with help), markers, Hypothesis profiles.

Importing ``kernels`` first fixes the Triton mode: on a machine without a GPU the interpreter is
switched on before any ``@triton.jit`` decoration.
"""
import pytest

from fuzz.host import compile_caches, parallel, thread_budget

compile_caches.share()  # before kernels activates the gfx950 casts, whose Triton cache is a folder of this one

parallel.pin_this_worker()  # an xdist worker: its own device and thread share, before kernels imports torch

import kernels  # noqa: E402,F401  (sets TRITON_INTERPRET=1 where no GPU is visible)
from fuzz.search import profiles# noqa: E402
from reference.emulation.aiter_modes import parse_mode as parse_aiter_mode  # noqa: E402

pytest_plugins = ("fuzz.testing.fixtures_aiter", "fuzz.submission.plugin")  # aiter_info (--aiter); --submission mode


def pytest_addoption(parser):
    group = parser.getgroup("mxfp4-fuzz", "MXFP4 GEMM fuzzing")
    group.addoption(
        "--profile",
        choices=sorted(profiles.PROFILES),
        default=None,
        help="Hypothesis effort profile: smoke (default on CPU), ci, deep, gpu (default where a GPU is visible).",
    )
    group.addoption(
        "--aiter",
        type=parse_aiter_mode,
        default="auto",
        metavar="auto|real|emulated|source=PATH",
        help="Which aiter to use: the real package when importable (auto), or force real/emulated; source=PATH: "
        "the emulation running aiter's own Python wrappers and Triton kernels from the aiter checkout at PATH "
        "(e.g. at f3be04a12a0c, the runner's), its compiled layer stubbed (docs/aiter_emulation.md).",
    )


    group.addoption(
        "--replay",
        action="append",
        default=[],
        metavar="FILE",
        help="Run only the saved corpus case(s) in FILE (fuzz/corpus/<id>.json), as printed on a failure card.",
    )


    group.addoption(
        "--codegen",
        action="store_true",
        default=None,
        help="Run the gfx950 code-generation check (AOT compile of every shipped config; ~1 min cold, cached). "
        "On by default with --profile ci or deep.",
    )
    group.addoption(
        "--bench-json",
        metavar="PATH",
        default=None,
        help="Write the kernel-path benchmarks (event timings, noise, roofline) from fuzz/bench/test_bench_paths.py "
        "to PATH; compare two with python -m fuzz.bench.compare OLD NEW.",
    )
    group.addoption(
        "--mutants",
        action="store_true",
        default=False,
        help="Mutation self-check: apply each shipped mutant (fuzz/selfcheck/mutants.py) to a copy of kernels/ and require "
        "the fuzz suite to kill it; prints the kill table.",
    )
    group.addoption(
        "--no-shrink",
        action="store_true",
        default=False,
        help="Report a failing test's first failing example without shrinking it (the mutation self-check: a kill "
        "needs a failure, not a minimal one; shrinking was most of a mutant's time).",
    )
    group.addoption(
        "--run-first",
        action="append",
        default=[],
        metavar="TEXT",
        help="Run the tests whose node id contains TEXT before the others (repeatable; the order is kept otherwise).",
    )
    group.addoption(
        "--example-db",
        metavar="DIR|github:OWNER/REPO",
        default=None,
        help="Keep Hypothesis's examples in DIR/<key> (key: kernels/ source hash, triton and aiter versions, "
        "arch), or also read the CI artifact of that key from a GitHub repository (docs/ci_workflow.md).",
    )
    group.addoption(
        "--faults",
        default=None,
        metavar="SPEC",
        help="Inject faults into the kernels dispatcher, e.g. 'fused:raise@K%%512!=0,helper:unavailable' "
        "(grammar: python -m kernels.faults --help).",
    )


def pytest_generate_tests(metafunc):
    if "corpus_case" in metafunc.fixturenames:
        from fuzz.subjects import corpus

        files = metafunc.config.getoption("--replay")
        cases = [corpus.load(f).case for f in files] if files else list(corpus.iter_corpus())
        metafunc.parametrize("corpus_case", cases, ids=[c.id() for c in cases])


@pytest.hookimpl(tryfirst=True)  # before xdist's own: it reads the xdist_group marks added here
def pytest_collection_modifyitems(config, items):
    """Saved failures first; with --replay, nothing but them. Tests marked slow (self-tests of the
    suite that spawn many subprocesses) run in the ci and deep profiles only, those marked deep in deep only."""
    if profiles.active() not in ("ci", "deep"):
        skip = pytest.mark.skip(reason="slow self-test: runs with --profile ci or deep")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    if profiles.active() != "deep":  # kept out of ci's time budget (well under 20 minutes on 2 cores)
        skip = pytest.mark.skip(reason="long self-test covered in ci by another route: runs with --profile deep")
        for item in items:
            if "deep" in item.keywords:
                item.add_marker(skip)
    first = config.getoption("--run-first")
    if first:  # a stable sort: within each group the collection order stays
        items.sort(key=lambda i: next((n for n, text in enumerate(first) if text in i.nodeid), len(first)))
    replay = [i for i in items if "corpus_case" in getattr(i, "fixturenames", ())]
    if config.getoption("--replay"):
        items[:] = replay
    else:
        items[:] = replay + [i for i in items if i not in replay]
    if hasattr(config, "workerinput"):  # an xdist worker: the longest tests start first, so none is the tail
        for item in items:
            if item.path.name in ONE_WORKER_MODULES:
                item.add_marker(pytest.mark.xdist_group(item.path.stem))
        items.sort(key=lambda i: 0 if i in replay else
                   1 if i.path.name in ONE_WORKER_MODULES or getattr(i, "originalname", "") in LONGEST_TESTS else 2)


# The longest tests (smoke, 2-core CPU: 10 to 35 s a path; a mutant is a suite run, 20 to 60 s)
LONGEST_TESTS = ("test_mutant_is_killed", "test_path_output_within_the_bound")
# Modules whose tests share one expensive module fixture (every example submission run once, minutes):
# under --dist loadgroup they stay on one worker instead of each worker computing the fixture again.
ONE_WORKER_MODULES = ("test_submission_examples.py", "test_tier_divergence_examples.py", "test_hip_builds.py")


def pytest_runtest_setup(item):
    thread_budget.refresh()  # checks started or ended since the last test: take the new share


def pytest_configure(config):
    from reference.emulation.select import use_aiter

    parallel.configure(config)  # -n K: device plan for the workers, scheduler, refuses the benchmarks
    if not parallel.is_xdist_controller(config):  # the controller runs no test: it is not a check
        thread_budget.register("xdist worker" if parallel.worker_id() else "pytest")
        thread_budget.refresh()

    try:
        use_aiter(config.getoption("--aiter"))  # real aiter where importable, else our emulation
    except (ImportError, RuntimeError) as exc:
        raise pytest.UsageError(f"--aiter={config.getoption('--aiter')}: {exc}") from exc
    from fuzz.search.example_db import database_for

    try:
        database = database_for(config.getoption("--example-db"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc
    profiles.load(config.getoption("--profile"), database,  # after use_aiter: the db key names the aiter
                  shrink=not config.getoption("--no-shrink"))
    if config.getoption("--codegen") is None:
        config.option.codegen = profiles.active() in ("ci", "deep")
    spec = config.getoption("--faults")
    if spec:
        import os

        from kernels import faults

        try:
            faults.parse(spec)
        except faults.FaultSpecError as exc:
            raise pytest.UsageError(str(exc)) from exc
        os.environ[faults.ENV_VAR] = spec


def pytest_report_header(config):
    from kernels.platform import detect

    from reference.emulation.select import current

    aiter = current()
    aiter_text = f"aiter {aiter.kind} ({aiter.version})" if aiter else "aiter not selected"
    if aiter and aiter.kind == "source":  # which of aiter's modules ran from the checkout
        aiter_text = aiter.describe()
    lines = [f"mxfp4-fuzz: {detect().describe()}, {aiter_text}, hypothesis profile {profiles.active()}"]
    if parallel.describe(config):
        lines.append(parallel.describe(config))
    if not detect().interpreter:
        caches = compile_caches.share()  # set at this module's import: here only read back
        lines.append(f"mxfp4-fuzz: compile caches (shared with workers): triton {caches['TRITON_CACHE_DIR']}, "
                     f"torch extensions {caches['TORCH_EXTENSIONS_DIR']}")
    if detect().interpreter:
        from reference.emulation import triton_interpreter

        patches = ", ".join(triton_interpreter.installed()) or "none (stock Triton: verdicts may be false alarms)"
        lines.append(f"mxfp4-fuzz: interpreter patches: {patches}")
    return lines


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    return parallel.auto_workers()  # -n auto: one worker per GPU where there are GPUs, else per core


MUTANT_RESULTS = []  # MutantResult per mutant test, from the reports: xdist workers' too


def pytest_runtest_logreport(report):
    for name, value in report.user_properties if report.when == "call" else ():
        if name == "mutant_result":
            from fuzz.selfcheck.mutants import MutantResult

            MUTANT_RESULTS.append(MutantResult(**value))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if config.getoption("--mutants") and MUTANT_RESULTS:
        from fuzz.selfcheck.mutants import MUTANTS

        order = [m.name for m in MUTANTS]
        terminalreporter.section("mutant kill table")
        for r in sorted(MUTANT_RESULTS, key=lambda r: order.index(r.mutant) if r.mutant in order else len(order)):
            terminalreporter.write_line(r.row())
