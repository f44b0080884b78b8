"""A warm parent for the workers of one process, on the CPU tier: it imports torch, numpy and Hypothesis
once (about 3 of a worker's 3.5 s of start on the 2-core box) and forks each new worker from there, so a run
that starts many workers (a table of example files, the many-file command's restarts, the suite's
self-tests) pays the imports once instead of per worker.

The forked worker is the worker ``python -m fuzz.submission.worker`` would be: its own session (a
timeout kills its group), its stdin /dev/null, fds 1 and 2 the runner's pipes, the environment and
working directory the runner gives, then ``worker.main``. Nothing of ours is imported in the zygote
before the fork, so every worker imports our modules (and ``kernels``, which fixes the Triton mode)
under its own environment, as a fresh process does.

The zygote reaps its children and writes each one's exit status (``os.waitstatus_to_exitcode``: -N for
signal N) to a pipe the runner passed with the fds, which ``ZygoteProcess`` reads as Popen's
``returncode``. The zygote ends when its socket does, that is with the process that started it (not
PR_SET_PDEATHSIG: that fires when the starting *thread* ends, and a worker started from a pool thread
would have killed the zygote and lost the status of the workers still running). Being that process's
child, the zygote and its workers are in the process tree the many-file command kills on Ctrl-C.

On a GPU host too: CUDA does not survive a fork of a process that initialised it, and the zygote never
does (importing torch and Triton initialises no device; each worker initialises CUDA itself after the
fork, as a fresh process does). The zygote checks that before every fork and, should anything have
initialised CUDA in it, ends itself instead of forking. ``MXFP4_FUZZ_ZYGOTE=0`` turns it off. A zygote
that cannot start or answer falls back to a plain process start, once and for good.
"""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
from collections import deque

# Third-party only (ours import under each worker's environment), and nothing that touches a device at
# import: torch.utils.cpp_extension asks torch.cuda.is_available() where it finds CUDA_HOME, which starts
# the CUDA driver and poisons every fork ("Cannot re-initialize CUDA in forked subprocess": every check
# on the H100 host, stop 50), although torch.cuda.is_initialized() stays False. hypothesis (the input
# builders') reads no device.
# Not Triton: its own @jit functions (tl.max, tl.sum's combine functions...) are interpreted or compiled
# as TRITON_INTERPRET says when it is imported, and the command starts the zygote before anything decided
# the tier (that needs torch.cuda; stop 51): a zygote that imported Triton then gave the CPU tier's workers
# compiled stdlib functions, and every kernel calling tl.max raised "Cannot call @triton.jit'd outside of
# the scope of a kernel" (godzmk's official FAIL). Each worker imports it after choosing its mode (70 ms).
PRELOAD = ("torch", "numpy", "hypothesis")
ENV = "MXFP4_FUZZ_ZYGOTE"


# ---------------------------------------------------------------------------------------------------
# The runner's side


class ZygoteProcess:
    """A forked worker as ``subprocess.Popen`` is used by the runner: ``pid``, ``poll``, ``wait``,
    ``returncode`` (from the zygote's status pipe). The request to fork it is sent at once; its pid is
    read when first asked for (``pid``, ``forked``), so a caller never waits for the zygote's imports
    before it needs the worker: 0 when the zygote ended without forking it."""

    def __init__(self, zygote: "Zygote", status_fd: int):
        self._zygote, self._pid = zygote, None
        self.returncode, self._status_fd, self._pending = None, status_fd, b""
        self._reading = threading.Lock()  # the check's thread may kill it while a helper's thread waits on it

    @property
    def pid(self) -> int:
        if self._pid is None:
            self._zygote.answer(self)
        return self._pid

    def forked(self) -> bool:
        return self.pid > 0

    def _read(self, timeout: float | None) -> None:
        with self._reading:  # the status fd is closed by whoever reads the exit status: one reader at a time
            self._read_alone(timeout)

    def _read_alone(self, timeout: float | None) -> None:
        while self.returncode is None:
            ready, _, _ = select.select([self._status_fd], [], [], timeout)
            if not ready:
                return
            chunk = os.read(self._status_fd, 64)
            self._pending += chunk
            if not chunk or self._pending.endswith(b"\n"):
                text = self._pending.strip()
                self.returncode = int(text) if text else -9  # the zygote died before saying: count it killed
                os.close(self._status_fd)

    def poll(self):
        self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None):
        self._read(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired("worker", timeout)
        return self.returncode


class Zygote:
    def __init__(self, root: str, env: dict):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fuzz.submission.zygote", "--socket-fd", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, cwd=root, env=env, start_new_session=True)
        theirs.close()
        self.socket, self.lock, self.reader = ours, threading.Lock(), ours.makefile("rb")
        self.unanswered: deque = deque()  # spawned, pid not read yet, in the order the zygote answers

    def spawn(self, fds: list, env: dict, cwd: str, argv: list) -> ZygoteProcess:
        """A worker forked with ``fds`` (its request read end, response write end, stdout and stderr
        write ends) as the same numbers ``argv`` names; raises OSError when the request cannot be sent.
        Returns at once: the zygote forks once its imports are done, and answers the pids in order."""
        status_r, status_w = os.pipe()
        try:
            with self.lock:
                message = json.dumps({"env": env, "cwd": cwd, "argv": argv, "fds": fds}).encode() + b"\n"
                socket.send_fds(self.socket, [message], [*fds, status_w])
                process = ZygoteProcess(self, status_r)
                self.unanswered.append(process)
        except OSError:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)
        return process

    def answer(self, process: ZygoteProcess) -> None:
        """Read the zygote's answers up to ``process``'s pid (0 for each when the zygote ended)."""
        with self.lock:
            while process._pid is None:
                try:
                    line = self.reader.readline()
                except OSError:  # reset: the zygote died with our request unread
                    line = b""
                first = self.unanswered.popleft()
                first._pid = int(line) if line.strip() else 0


_ZYGOTE: dict = {}  # "zygote": the started Zygote, or None once it failed (plain starts from then on)


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0" and sys.platform == "linux" and hasattr(socket, "send_fds")


def disable() -> None:
    """No more forks: the zygote ended without forking a worker; plain starts from now on."""
    _ZYGOTE["zygote"] = None


def spawn(root: str, fds: list, env: dict, argv: list):
    """A ZygoteProcess for a worker, or None (no zygote here: start the worker as a plain process)."""
    if "zygote" not in _ZYGOTE:
        try:
            _ZYGOTE["zygote"] = Zygote(root, env) if enabled() else None
        except OSError:
            _ZYGOTE["zygote"] = None
    zygote = _ZYGOTE["zygote"]
    if zygote is None:
        return None
    try:
        return zygote.spawn(fds, env, root, argv)
    except OSError:
        _ZYGOTE["zygote"] = None
        return None


# ---------------------------------------------------------------------------------------------------
# The zygote's side


def _become_worker(request: dict, fds: list) -> None:
    """In the forked child: the process ``python -m fuzz.submission.worker ARGV`` would be, then its main."""
    import io
    import traceback

    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(fds[2], 1)
    os.dup2(fds[3], 2)
    for fd in fds[2:]:
        os.close(fd)
    argv = [str({str(n): str(f) for n, f in zip(request["fds"][:2], fds[:2])}.get(a, a)) for a in request["argv"]]
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, line_buffering=True)
    import importlib.util

    # as ``python -m`` sets it: the module's file, then the fd numbers this process received
    sys.argv = [importlib.util.find_spec("fuzz.submission.worker").origin, *argv]
    code = 0
    try:
        from fuzz.submission import worker

        worker.main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends a plain process
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(socket_fd: int) -> None:
    for name in PRELOAD:
        __import__(name)
    import torch

    torch.set_num_threads(1)  # no OpenMP pool may start here: a forked child of a process that ran one hangs
    channel = socket.socket(fileno=socket_fd)
    statuses: dict = {}  # pid -> the status pipe's write end
    lock = threading.Lock()

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                threading.Event().wait(0.05)
                continue
            with lock:
                fd = statuses.pop(pid, None)
            if fd is not None:
                os.write(fd, f"{os.waitstatus_to_exitcode(status)}\n".encode())
                os.close(fd)

    threading.Thread(target=reap, daemon=True).start()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 8)
        except ConnectionResetError:  # the runner's process ended with a request of ours unanswered
            os._exit(0)
        while message and not message.endswith(b"\n"):  # one request per line; its fds came with the first part
            more = channel.recv(1 << 20)
            if not more:
                break
            message += more
        if not message.endswith(b"\n"):
            os._exit(0)  # the runner's process is gone
        request = json.loads(message)
        if torch.cuda.is_initialized():  # a child would inherit a CUDA context it cannot use: no fork, ever
            os._exit(0)  # the runner reads no pid and starts its workers as plain processes from then on
        with lock:
            pid = os.fork()
            if pid == 0:
                channel.close()
                for fd in statuses.values():
                    os.close(fd)
                os.close(fds[-1])
                _become_worker(request, fds[:-1])
            statuses[pid] = fds[-1]
        for fd in fds[:-1]:
            os.close(fd)
        try:
            channel.sendall(f"{pid}\n".encode())
        except OSError:  # the runner's process ended while its worker was being forked: end with it
            os._exit(0)


if __name__ == "__main__":
    serve(int(sys.argv[sys.argv.index("--socket-fd") + 1]))
