"""Named, version-gated, probed patches and the swap/undo helpers they are built from: the interpreter's
patches (triton_interpreter.py) and gfx950's float -> integer casts (gfx950_casts.py) both use them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Patch:
    name: str
    divergence: str  # what stock Triton's interpreter does that compiled Triton does not
    checked: tuple  # Triton versions on which the divergence was seen and the patch verified
    diverges: Callable[[], bool]  # probe on the stock interpreter: is the divergence still there?
    apply: Callable[[], Callable[[], None]]  # installs; returns the function that uninstalls




def _version() -> tuple:
    import triton

    return tuple(int(p) for p in triton.__version__.split("+")[0].split(".")[:2])


def _gated(patch: Patch) -> bool:
    """Apply where the divergence is known (checked versions and newer) and the probe still sees it."""
    oldest = min(tuple(int(p) for p in v.split(".")[:2]) for v in patch.checked)
    return _version() >= oldest and patch.diverges()


def install_patches(patches, registry: dict, names=None) -> list:
    """Apply every (or the named) patch of ``patches`` whose gate says this Triton needs it and that
    ``registry`` (name -> uninstall) does not hold yet; returns the names installed now."""
    done = []
    for patch in patches:
        if (names is None or patch.name in names) and patch.name not in registry and _gated(patch):
            registry[patch.name] = patch.apply()
            done.append(patch.name)
    return done


def uninstall_patches(registry: dict, names=None) -> None:
    for name in reversed(list(registry)):  # last in, first out: later patches may wrap earlier ones
        if names is None or name in names:
            registry.pop(name)()


def _swap(obj, name: str, value) -> Callable[[], None]:
    original = obj.__dict__[name] if name in obj.__dict__ else getattr(obj, name)
    setattr(obj, name, value)

    def undo():
        setattr(obj, name, original)

    return undo


def wrap_jit_run(wrap) -> Callable[[], None]:
    """``JITFunction.run = wrap(the current run)``, every compiled launch's path (nvidia_shared_memory.py,
    triton_cache_race.py); returns the undo."""
    from triton.runtime.jit import JITFunction

    return _swap(JITFunction, "run", wrap(JITFunction.__dict__["run"]))


def _undo_all(undos) -> Callable[[], None]:
    def undo():
        for u in reversed(undos):
            u()

    return undo
