"""``mxfp4-fuzz check A.py B.py ...``: file discovery, GPU assignment, the exit code of the worst file, and
one real run over two example files (a summary that follows SUMMARY_SCHEMA, a report and a log per file),
and one stopped by SIGINT (exit 130, a partial summary, no process of it left)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuzz.submission import many

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_folder_gives_its_submissions_and_not_its_helper_modules(tmp_path):
    (tmp_path / "a.py").write_text("def custom_kernel(data):\n    return data[0]\n")
    (tmp_path / "helper.py").write_text("X = 1\n")
    (tmp_path / "b.py").write_text("def custom_kernel(data):\n    return data[0]\n")
    files = many.submission_files([str(tmp_path), str(tmp_path / "a.py")])
    assert [f.name for f in files] == ["a.py", "b.py"]  # each once, in order
    with pytest.raises(ValueError, match="no such file"):
        many.submission_files([str(tmp_path / "missing.py")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no submission file"):
        many.submission_files([str(tmp_path / "empty")])


def test_the_worst_exit_code_wins():
    assert many.worst_exit([0, 0]) == 0
    assert many.worst_exit([0, 1, 5]) == 1
    assert many.worst_exit([1, 3]) == 3
    assert many.worst_exit([0, -9]) == 3  # killed by a signal
    assert many.worst_exit([]) == 0
    # NOT RUN (6) and "only KernelGuard objects" (7) are the submission runner's own codes, not crashes
    assert many.worst_exit([0, 6]) == 6 and many.worst_exit([6, 7]) == 7 and many.worst_exit([7, 1]) == 1
    assert many.worst_exit([6, 8]) == 8 and many.worst_exit([8, 7]) == 7  # latent bugs only: below KernelGuard's filter


def test_jobs_default_to_one_per_gpu_or_core():
    assert many.default_jobs(10, ["0", "1"], 16) == 2
    assert many.default_jobs(10, [], 2) == 2
    assert many.default_jobs(1, [], 16) == 1


def test_each_child_sees_its_gpu_alone():
    env = many.child_env("CUDA_VISIBLE_DEVICES", "3", {"HIP_VISIBLE_DEVICES": "0,1", "PYTEST_XDIST_WORKER": "gw1"})
    assert env["CUDA_VISIBLE_DEVICES"] == "3" and "HIP_VISIBLE_DEVICES" not in env
    assert "PYTEST_XDIST_WORKER" not in env


def test_report_names_stay_distinct():
    taken: set = set()
    assert [many.report_name(Path(p), taken) for p in ("x/a.py", "y/a.py", "b.py")] == ["a", "a-2", "b"]


def _schema_holds(value: dict, schema: dict) -> None:
    assert set(schema) <= set(value), set(schema) - set(value)
    for key, kind in schema.items():
        assert isinstance(value[key], kind), (key, value[key])


@pytest.mark.slow  # two check processes
def test_two_files_in_one_command(tmp_path):
    files = [EXAMPLES / "correct_reference_style.py", EXAMPLES / "every_call_raises.py"]
    command = [sys.executable, "-m", "fuzz.cli", "check", *map(str, files), "--jobs", "2",
               "--out-dir", str(tmp_path / "out"), "--", "-k", "loads or official"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # every_call_raises fails official
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    _schema_holds(summary, many.SUMMARY_SCHEMA)
    assert summary["exit_code"] == 1 and summary["jobs"] == 2
    rows = {Path(r["file"]).name: r for r in summary["files"]}
    for row in rows.values():
        _schema_holds(row, many.FILE_SCHEMA)
        assert Path(row["report"]).exists() and Path(row["log"]).exists()
    assert rows["correct_reference_style.py"]["verdicts"]["official"] == "PASS"
    assert rows["correct_reference_style.py"]["exit_code"] == 0
    assert rows["every_call_raises.py"]["failed"] == ["official"]
    assert "files per minute" in done.stdout and "every_call_raises.py" in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("file "))
    assert "official" in header and "loads" in header


def _processes() -> dict:
    """{pid: (parent pid, start time, state, command line)} of every process, from /proc."""
    found = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()
            command = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        found[int(name)] = (int(stat[1]), int(stat[19]), stat[0].decode(), command)
    return found


def _tree(root: int, table: dict) -> dict:
    """{pid: start time} of the processes below ``root`` (its checks, their workers, what those forked)."""
    below, todo = {}, [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, start, _, _) in table.items():
            if ppid == parent and pid not in below:
                below[pid] = start
                todo.append(pid)
    return below


@pytest.mark.slow  # two check processes and their workers
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the run's processes through /proc")
def test_sigint_ends_every_process_of_a_many_file_run(tmp_path):
    out = tmp_path / "out"
    files = [EXAMPLES / "per_group_quant_slow.py", EXAMPLES / "correct_reference_style.py", EXAMPLES / "wrong_tail.py"]
    command = [sys.executable, "-m", "fuzz.cli", "check", *map(str, files), "--jobs", "2", "--budget", "0",
               "--out-dir", str(out)]
    env = dict(os.environ, MXFP4_FUZZ_BATCHED="0",  # per_group_quant_slow runs for a minute, not seconds
               PYTHONPATH=os.pathsep.join(filter(None, [str(EXAMPLES.parents[1]), os.environ.get("PYTHONPATH")])))
    with open(tmp_path / "stdout", "wb") as stdout, open(tmp_path / "stderr", "wb") as stderr:
        run = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=tmp_path)
    try:
        seen: dict = {}
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and run.poll() is None:  # both checks, each with its worker
            table = _processes()
            tree = _tree(run.pid, table)
            seen.update(tree)
            checks = [p for p in tree if str(out) in table[p][3]]
            zygotes = {p for p in tree if "fuzz.submission.zygote" in table[p][3]}  # workers forked warm
            workers = [p for p in tree if "fuzz.submission.worker" in table[p][3] or table[p][0] in zygotes]
            if len(checks) == 2 and len(workers) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the run did not reach two checks with their workers: {(tmp_path / 'stderr').read_text()}")
        seen.update(_tree(run.pid, _processes()))
        os.kill(run.pid, signal.SIGINT)
        assert run.wait(timeout=60) == 130, (tmp_path / "stdout").read_text()[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["exit_code"] == 130
    rows = {Path(r["file"]).name: r for r in summary["files"]}
    assert len(rows) == 3 and rows["per_group_quant_slow.py"]["error"].startswith("interrupted after"), rows
    assert all((r["error"] or "").startswith("interrupted") or r["exit_code"] != 130 for r in rows.values()), rows
    assert "Traceback" not in (tmp_path / "stdout").read_text() + (tmp_path / "stderr").read_text()
    deadline = time.monotonic() + 5
    while True:  # not a zombie: a dead process init has not reaped yet runs nothing
        table = _processes()
        left = [table[p][3] for p, start in seen.items()
                if p in table and table[p][1] == start and table[p][2] != "Z"]
        left += [c for p, (_, _, state, c) in table.items() if str(out) in c and state != "Z"]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, left


def test_a_progress_line_counts_what_did_not_run():
    """"no failure" alone read as a clean file where the budget had left 14 verdicts NOT RUN."""
    from types import SimpleNamespace

    from fuzz.submission.many import _progress

    def finished(verdicts):
        return SimpleNamespace(summary={"verdicts": verdicts, "failed": [], "error": None}, seconds=3.0,
                               device=None, path=Path("a.py"))

    assert "a.py: no failure, 2 NOT RUN" in _progress(1, 2, [], 0.0, finished(
        {"loads": "PASS", "official": "NOT RUN", "correctness": "NOT RUN"}))
    assert "a.py: no failure (" in _progress(1, 2, [], 0.0, finished({"loads": "PASS", "official": "PASS"}))
    assert "a.py: NOT RUN (" in _progress(1, 2, [], 0.0, finished({"loads": "NOT RUN", "kernelguard": "SKIP"}))
