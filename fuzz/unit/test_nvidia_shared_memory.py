"""A launch asking more shared memory than the NVIDIA GPU has runs again with fewer pipeline stages, noted
(reference/emulation/nvidia_shared_memory.py), on a stand-in for ``JITFunction.run``: the hook's logic is
the same on every machine; where it is installed (compiled Triton on CUDA) the H200 decides."""
from __future__ import annotations

import pytest
from triton.runtime.errors import OutOfResources

from reference.emulation import nvidia_shared_memory as shm


class Kernel:
    """What the hook reads of a JITFunction: its ``fn``'s name."""

    def __init__(self):
        self.fn = lambda: None
        self.fn.__qualname__ = "_gemm_kernel"


def stock_needing(stages_that_fit: int, calls: list, name: str = "shared memory"):
    def run(self, *args, grid, warmup, **kwargs):
        calls.append(kwargs.get("num_stages"))
        if kwargs.get("num_stages", 3) > stages_that_fit:
            raise OutOfResources(235520, 232448, name)
        return ("ran", args, grid, kwargs.get("num_stages"))
    return run


@pytest.fixture(autouse=True)
def clean():
    shm.reset()
    yield
    shm.reset()


def test_a_launch_that_fits_passes_straight_through():
    calls = []
    run = shm.wrap_run(stock_needing(3, calls), stages_default=3)
    assert run(Kernel(), 1, 2, grid=(4,), warmup=False, num_stages=2) == ("ran", (1, 2), (4,), 2)
    assert calls == [2] and shm.lowered() == []


def test_too_much_shared_memory_runs_with_fewer_stages_and_says_so():
    calls = []
    run = shm.wrap_run(stock_needing(1, calls), stages_default=3)
    assert run(Kernel(), "x", grid=(1,), warmup=False, num_stages=3) == ("ran", ("x",), (1,), 1)
    assert calls == [3, 2, 1]  # one stage fewer at a time
    (entry,) = shm.lowered()
    assert (entry["kernel"], entry["asked"], entry["used"], entry["count"]) == ("_gemm_kernel", 3, 1, 1)
    assert "num_stages=3" in shm.note(entry) and "num_stages=1" in shm.note(entry)


def test_without_num_stages_the_backends_default_is_lowered():
    calls = []
    run = shm.wrap_run(stock_needing(2, calls), stages_default=3)
    assert run(Kernel(), grid=(1,), warmup=False)[-1] == 2
    assert calls == [None, 2]


def test_still_too_large_at_one_stage_the_first_error_stands():
    calls = []
    run = shm.wrap_run(stock_needing(0, calls), stages_default=3)
    with pytest.raises(OutOfResources) as raised:
        run(Kernel(), grid=(1,), warmup=False, num_stages=2)
    assert calls == [2, 1] and shm.lowered() == [] and raised.value.required == 235520


@pytest.mark.parametrize("error", [OutOfResources(300, 255, "registers"), ValueError("the file's own")])
def test_other_errors_are_never_retried(error):
    calls = []

    def stock(self, *args, **kwargs):
        calls.append(kwargs.get("num_stages"))
        raise error

    with pytest.raises(type(error)):
        shm.wrap_run(stock, stages_default=3)(Kernel(), grid=(1,), warmup=False, num_stages=3)
    assert calls == [3]


def test_the_hook_stays_off_where_triton_does_not_compile_for_cuda():
    from reference.emulation import cuda_backend_hook

    if cuda_backend_hook.compiled_on_cuda():
        assert shm.installed()  # kernels.platform installed it
    else:
        assert not shm.install() and not shm.installed()
