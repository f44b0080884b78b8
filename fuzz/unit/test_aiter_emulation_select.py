"""Choosing between the real aiter and the emulation (reference/emulation/select.py)."""
import importlib
import sys
import types

import pytest

from reference.emulation import select


@pytest.fixture
def restore_aiter_choice():
    """Put sys.path, the aiter modules and select's record back as they were: other tests keep their aiter."""
    path = list(sys.path)
    modules = {name: mod for name, mod in sys.modules.items() if name == "aiter" or name.startswith("aiter.")}
    state = (select._current, dict(select._chosen_for))
    yield
    sys.path[:] = path
    for name in [n for n in sys.modules if n == "aiter" or n.startswith("aiter.")]:
        del sys.modules[name]
    sys.modules.update(modules)
    select._current, select._chosen_for = state[0], state[1]


def real_aiter_available() -> bool:
    paths = [p for p in sys.path if p != str(select.EMULATION_ROOT)]
    return importlib.machinery.PathFinder.find_spec("aiter", paths) is not None


def test_emulated_mode_makes_import_aiter_the_emulation(restore_aiter_choice):
    info = select.use_aiter("emulated")
    import aiter

    assert info.kind == "emulated" and select.current() == info
    assert aiter._emulation.IS_EMULATION and info.path.startswith(str(select.EMULATION_ROOT))
    assert sys.path[0] == str(select.EMULATION_ROOT)
    from aiter.ops.triton.gemm_afp4wfp4 import get_splitk  # the pre-2026 flat path still resolves

    assert get_splitk is sys.modules["aiter.ops.triton.gemm.basic.gemm_afp4wfp4"].get_splitk
    assert select.use_aiter("emulated") == info  # a repeated choice changes nothing


@pytest.mark.skipif(real_aiter_available(), reason="a real aiter is installed here")
def test_real_mode_without_aiter_says_what_is_missing(restore_aiter_choice):
    with pytest.raises(RuntimeError, match="aiter package cannot be imported"):
        select.use_aiter("real")
    assert select.use_aiter("auto").kind == "emulated"


def test_switching_purges_the_previous_aiter(restore_aiter_choice):
    select.use_aiter("emulated")
    stand_in = types.ModuleType("aiter")  # what a real aiter looks like to select: no emulation marker
    sys.modules["aiter"] = stand_in
    stale_ops = sys.modules["aiter.ops"] = types.ModuleType("aiter.ops")
    assert select.use_aiter("emulated").kind == "emulated"
    import aiter

    assert aiter is not stand_in and aiter._emulation.IS_EMULATION
    assert sys.modules["aiter.ops"] is not stale_ops and hasattr(sys.modules["aiter.ops"], "gemm_op_a4w4")


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="auto"):
        select.use_aiter("maybe")


def test_the_emulation_loads_beside_the_selected_aiter():
    emulation = select.load_emulation("aiter_emulated")
    assert emulation.__name__ == "aiter_emulated" and emulation._emulation.IS_EMULATION
    assert select.load_emulation("aiter_emulated") is emulation
    assert sys.modules["aiter_emulated.ops.gemm_op_a4w4"].gemm_a4w4 is emulation.gemm_a4w4
