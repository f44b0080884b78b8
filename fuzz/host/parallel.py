"""pytest-xdist workers: one device per worker on a GPU host, no thread oversubscription on a CPU.

``pytest fuzz -n auto`` starts one worker process per core (``-n K``: K workers). The controller
collects nothing and runs nothing; before it starts the workers it writes the devices it sees to
``$MXFP4_FUZZ_DEVICES`` (``plan``), which the workers inherit. A worker pins itself (``pin``) at the
top of the root conftest, before ``kernels`` imports torch and touches a device: xdist sets
``$PYTEST_XDIST_WORKER`` (``gw0``, ``gw1``, ...) before the worker's pytest reads any conftest.

* GPU host: worker ``gwI`` sees device ``devices[I % len(devices)]`` alone (the variable the
  controller's list came from, ``CUDA_VISIBLE_DEVICES`` or ``HIP_VISIBLE_DEVICES``; the other is
  removed so the two never compose). More workers than devices share devices round-robin.
* Every worker, CPU or GPU: ``cores // workers`` threads (at least 1) for torch, OpenMP and BLAS,
  so K interpreters do not fight over the cores. The variables are inherited by what the worker
  starts (the submission's worker process, mutant runs), so they stay within the share too. Each
  worker then registers as one check (fuzz/host/thread_budget.py): other checks on the host shrink the share.

Pure functions of an environment mapping, so tests fake any device count (fuzz/unit/test_parallel.py).
"""
from __future__ import annotations

import os

from fuzz.host.thread_budget import MARK_VAR, THREAD_VARS

PLAN_VAR = "MXFP4_FUZZ_DEVICES"  # "<VARIABLE>:<id>,<id>,..." written by the controller, "" without a GPU
DEVICE_VARS = ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")  # HIP honours both; ROCR_* is left alone


def worker_id(environ=os.environ) -> str | None:
    """``gw3`` in xdist's fourth worker, None in the controller or a plain pytest run."""
    return environ.get("PYTEST_XDIST_WORKER") or None


def plan(environ, device_count: int) -> str:
    """The controller's devices as ``$MXFP4_FUZZ_DEVICES``: the ids already made visible to it (the
    first of DEVICE_VARS that is set), else ``0 .. device_count-1``; "" without a device."""
    if device_count <= 0:
        return ""
    for var in DEVICE_VARS:
        if environ.get(var, "").strip():
            ids = [d.strip() for d in environ[var].split(",") if d.strip()]
            return f"{var}:{','.join(ids[:device_count])}"
    return f"CUDA_VISIBLE_DEVICES:{','.join(str(i) for i in range(device_count))}"


def pin(environ, worker: str, workers: int, cores: int) -> dict:
    """Set ``worker``'s device and thread variables in ``environ`` (from the controller's plan);
    returns what was set, for the report header."""
    index = int(worker.removeprefix("gw")) if worker.removeprefix("gw").isdigit() else 0
    pinned = {}
    var, _, ids = environ.get(PLAN_VAR, "").partition(":")
    devices = [d for d in ids.split(",") if d]
    if devices:
        for other in DEVICE_VARS:
            environ.pop(other, None)
        pinned[var] = environ[var] = devices[index % len(devices)]
    threads = str(max(1, cores // max(1, workers)))
    for name in THREAD_VARS:
        pinned[name] = environ[name] = threads
    environ[MARK_VAR] = threads  # ours, not the user's: fuzz/host/thread_budget.py may resize it
    return pinned


def pin_this_worker() -> dict:
    """In an xdist worker: ``pin`` this process, and torch's thread pool if torch is already loaded.
    Elsewhere: nothing. Must run before anything initialises a GPU."""
    worker = worker_id()
    if worker is None:
        return {}
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    pinned = pin(os.environ, worker, workers, os.cpu_count() or 1)
    import sys

    if "torch" in sys.modules:  # a plugin imported it first: the variables above came too late for its pool
        sys.modules["torch"].set_num_threads(int(pinned["OMP_NUM_THREADS"]))
    return pinned


def is_xdist_controller(config) -> bool:
    """This process hands tests to xdist workers and runs none itself (``-n K`` or ``--tx``)."""
    return (not hasattr(config, "workerinput") and config.getoption("dist", default="no") != "no"
            and bool(getattr(config.option, "numprocesses", None) or getattr(config.option, "tx", None))
            and not config.getoption("collectonly"))


def auto_workers() -> int | None:
    """``-n auto`` on a GPU host: one worker per visible GPU (each pinned to its own); None elsewhere
    (xdist's default, one per CPU core)."""
    import torch

    return torch.cuda.device_count() or None if torch.cuda.is_available() else None


def plan_for_workers(config) -> None:
    """Controller, before xdist starts workers (pytest_configure): write the device plan they inherit."""
    if not is_xdist_controller(config):
        return
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    os.environ[PLAN_VAR] = plan(os.environ, count)


def describe(config) -> str | None:
    """The header line of an xdist run (controller), None otherwise."""
    if not is_xdist_controller(config):
        return None
    from xdist.workermanage import parse_tx_spec_config

    workers = len(parse_tx_spec_config(config))
    var, _, ids = os.environ.get(PLAN_VAR, "").partition(":")
    where = f"one device each from {var}={ids} (round-robin)" if ids else "no GPU"
    threads = max(1, (os.cpu_count() or 1) // workers)
    return (f"mxfp4-fuzz: xdist, {workers} workers, {where}, {threads} thread(s) each, "
            f"--dist {config.option.dist}")


def configure(config) -> None:
    """Controller of an xdist run (pytest_configure, before the workers start): refuse the timed path
    benchmarks, write the device plan, pick the scheduler, time the workers."""
    if hasattr(config, "workerinput"):  # a worker parses the command line, not the controller's choices
        config.option.loadgroup = config.option.loadgroup or config.workerinput.get(LOADGROUP_KEY, False)
    if not is_xdist_controller(config):
        return
    if config.getoption("benchmark_enable", default=False) or config.getoption("--bench-json", default=None):
        import pytest

        raise pytest.UsageError(
            "the path benchmarks (--benchmark-enable, --bench-json) cannot run under pytest-xdist (-n): "
            "other workers would load the same GPU while they are timed. Run them alone, without -n.")
    plan_for_workers(config)
    args = config.invocation_params.args
    if not any(a == "--dist" or a.startswith("--dist=") or a.startswith("-d") for a in args):
        # xdist's default (load) hands out fixed chunks: one long test (a mutant, a shrinking Hypothesis
        # test) left in a worker's chunk becomes the run's tail. loadgroup hands out one test at a time
        # (longest first, conftest), except that a module sharing an expensive fixture is one unit.
        config.option.dist = "loadgroup"
        config.option.loadgroup = True
    config.pluginmanager.register(XdistController(), "mxfp4-fuzz-xdist-controller")


LOADGROUP_KEY = "mxfp4_fuzz_loadgroup"


class XdistController:
    """Tells each worker the scheduler chosen here; prints per-worker test time at the end of the run
    (shows whether one worker was the tail)."""

    def pytest_configure_node(self, node):
        node.workerinput[LOADGROUP_KEY] = node.config.option.dist == "loadgroup"  # xdist_group marks count

    def __init__(self):
        import time

        self.started = time.perf_counter()
        self.busy: dict = {}  # worker id -> seconds in setup/call/teardown
        self.tests: dict = {}  # worker id -> tests run
        self.finished: dict = {}  # worker id -> seconds since the start when its last test ended

    def pytest_runtest_logreport(self, report):
        import time

        node = getattr(report, "node", None)
        worker = getattr(getattr(node, "gateway", None), "id", None)
        if worker is None:
            return
        self.busy[worker] = self.busy.get(worker, 0.0) + report.duration
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.tests[worker] = self.tests.get(worker, 0) + 1
        self.finished[worker] = time.perf_counter() - self.started

    def pytest_terminal_summary(self, terminalreporter):
        if not self.busy:
            return
        terminalreporter.section("xdist worker times")
        for worker in sorted(self.busy, key=lambda w: int(w.removeprefix("gw")) if w[2:].isdigit() else 0):
            terminalreporter.write_line(
                f"{worker:>5}  {self.tests.get(worker, 0):4d} tests  {self.busy[worker]:7.1f} s in tests  "
                f"last test ended at {self.finished[worker]:7.1f} s")
