"""The host-wide thread budget: checks register while they live, a dead one stops counting, the share is
the cores split between live checks, and the user's OMP_NUM_THREADS wins. Shown with real processes:
several independent Python processes, each registering as a check, see the same share."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fuzz.host import thread_budget


def _env(tmp_path, cores=16, **extra) -> dict:
    return {thread_budget.REGISTRY_VAR: str(tmp_path), thread_budget.CORES_VAR: str(cores), **extra}


def test_the_share_splits_the_cores_and_never_reaches_zero():
    assert thread_budget.share(16, 1) == 16
    assert thread_budget.share(16, 3) == 5
    assert thread_budget.share(2, 8) == 1
    assert thread_budget.share(4, 0) == 4


def test_dead_checks_stop_counting_and_their_files_go(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    (tmp_path / f"{dead}.json").write_text(json.dumps({"pid": dead, "what": "pytest", "started": 0}))
    (tmp_path / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "what": "pytest", "started": 0}))
    live = thread_budget.live_checks(tmp_path)
    assert [r["pid"] for r in live] == [os.getpid()]
    assert not (tmp_path / f"{dead}.json").exists()
    assert thread_budget.budget(_env(tmp_path), tmp_path) == 16


def test_the_users_omp_num_threads_wins_and_ours_does_not(tmp_path):
    assert thread_budget.budget(_env(tmp_path, OMP_NUM_THREADS="3"), tmp_path) == 3
    ours = _env(tmp_path, OMP_NUM_THREADS="8", **{thread_budget.MARK_VAR: "8"})
    assert thread_budget.user_threads(ours) is None
    assert thread_budget.budget(ours, tmp_path) == 16  # no live check registered: the whole host


def test_a_bad_core_count_is_refused():
    with pytest.raises(ValueError, match="MXFP4_FUZZ_CORES"):
        thread_budget.host_cores({thread_budget.CORES_VAR: "0"})


def test_apply_sets_the_variables_children_inherit_and_marks_them_ours():
    env: dict = {}
    thread_budget.apply(4, env)
    assert all(env[v] == "4" for v in thread_budget.THREAD_VARS) and env[thread_budget.MARK_VAR] == "4"
    user = {"OMP_NUM_THREADS": "2"}
    thread_budget.apply(4, user)
    assert user == {"OMP_NUM_THREADS": "2"}  # the user's value is left alone


CHECK = textwrap.dedent("""
    import sys, time
    from fuzz.host import thread_budget
    thread_budget.register("test")
    deadline = time.time() + 60
    while len(thread_budget.live_checks()) < int(sys.argv[1]) and time.time() < deadline:
        time.sleep(0.05)
    print(thread_budget.refresh(), flush=True)
    sys.stdin.read()  # stay registered until the test has seen every share
""")


def test_independent_processes_share_the_host(tmp_path):
    env = dict(os.environ, **_env(tmp_path, cores=12))
    env.pop("OMP_NUM_THREADS", None)
    procs = [subprocess.Popen([sys.executable, "-c", CHECK, "3"], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        shares = [int(p.stdout.readline()) for p in procs]
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=60)
    assert shares == [4, 4, 4]
    deadline = time.time() + 10
    while thread_budget.live_checks(tmp_path) and time.time() < deadline:
        time.sleep(0.05)
    assert thread_budget.live_checks(tmp_path) == []  # each removed its file on exit
