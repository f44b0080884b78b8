"""The ``--aiter`` values and their form check, apart from ``select`` (which activates Triton and imports
torch): the command line checks the value and starts the check's worker before it imports torch itself."""
from __future__ import annotations

import argparse
import os

MODES = ("auto", "real", "emulated", "source=PATH")
SOURCE_PREFIX = "source="


class AiterModeError(ValueError, argparse.ArgumentTypeError):
    """A malformed --aiter value (argparse and pytest print its message as is)."""


def parse_mode(text: str) -> str:
    """An --aiter value, checked for its form (for argparse/pytest ``type=``): ``source=PATH`` with PATH
    made absolute, so that a worker started elsewhere finds the same checkout."""
    if text.startswith(SOURCE_PREFIX):
        path = text[len(SOURCE_PREFIX):]
        if not path:
            raise AiterModeError("--aiter source=PATH needs the path of an aiter checkout")
        return SOURCE_PREFIX + os.path.abspath(os.path.expanduser(path))
    if text not in MODES:
        raise AiterModeError(f"--aiter must be one of auto, real, emulated, source=PATH; got {text!r}")
    return text


def name_runner_aiter(mode: str) -> None:
    """``source=PATH`` names the stand-in for the runner's aiter checkout (/home/runner/aiter, whose headers
    HIP files include) for this process and every one it starts, unless the user named one already."""
    from reference.emulation.runner_paths import ENV

    if mode.startswith(SOURCE_PREFIX):
        os.environ.setdefault(ENV, mode[len(SOURCE_PREFIX):])
