"""A launch that lost a race on the shared Triton cache runs again (reference/emulation/triton_cache_race.py);
any other FileNotFoundError, and a race lost every time, stands."""
from __future__ import annotations

import os

import pytest

from reference.emulation import triton_cache_race


class Launches:
    """A stand-in of JITFunction.run that raises ``errors`` in turn, then returns "ran"."""

    def __init__(self, errors):
        self.errors, self.calls = list(errors), 0

    def __call__(self, kernel, *args, **kwargs):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ran"


def _vanished(name: str) -> FileNotFoundError:
    path = os.path.join(triton_cache_race.cache_root(), "gfx950-casts", "ABC123", name)
    return FileNotFoundError(2, "No such file or directory", path)


def test_a_cache_file_that_vanished_is_compiled_again():
    stock = Launches([_vanished("k.json"), _vanished("__grp__k.json")])
    run = triton_cache_race.wrap_run(stock)
    before = triton_cache_race.retried()
    assert run(object(), 1, grid=(1,)) == "ran" and stock.calls == 3
    assert triton_cache_race.retried() == before + 2


def test_a_race_lost_every_time_stands():
    stock = Launches([_vanished("k.ptx")] * (triton_cache_race.RETRIES + 1))
    with pytest.raises(FileNotFoundError):
        triton_cache_race.wrap_run(stock)(object())
    assert stock.calls == triton_cache_race.RETRIES + 1


@pytest.mark.parametrize("error", [FileNotFoundError(2, "No such file or directory", "/data/weights.bin"),
                                   FileNotFoundError("no filename"), OSError("other")])
def test_any_other_error_stands_at_once(error):
    stock = Launches([error])
    with pytest.raises(type(error)):
        triton_cache_race.wrap_run(stock)(object())
    assert stock.calls == 1


def test_the_interpreter_gets_no_hook(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    if triton_cache_race.installed():
        pytest.skip("compiled Triton in this process: the hook is in")
    assert triton_cache_race.install() is False
