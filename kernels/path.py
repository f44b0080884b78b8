"""The one small interface every kernel path implements: a name, its requirements, and run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

import torch


class PathUnavailable(RuntimeError):
    """The path cannot run here (a missing package, the wrong GPU, a shape it does not support)."""


@dataclass
class RunInfo:
    """What a path did for one call: recorded by the dispatcher, shown in failure cards."""

    path: str
    config: str = ""
    splits: int = 1
    rounding: str = "rne"  # how the path rounds fp32 -> bf16 on this tier ("rne" or "rtz")
    details: dict = field(default_factory=dict)


class Path(Protocol):
    name: str

    def requirements(self) -> tuple[bool, str]:
        """(available, reason): whether this path can run on this machine at all."""

    def run(self, data: tuple) -> tuple[torch.Tensor, RunInfo]:
        """The task's output for ``data`` plus what was done; raises PathUnavailable or any error."""


@dataclass
class FunctionPath:
    """A Path from two plain functions (what every module in kernels/ provides)."""

    name: str
    requirements_fn: Callable[[], tuple[bool, str]]
    run_fn: Callable[[tuple], tuple[torch.Tensor, RunInfo]]

    def requirements(self) -> tuple[bool, str]:
        return self.requirements_fn()

    def run(self, data: tuple) -> tuple[torch.Tensor, RunInfo]:
        return self.run_fn(data)
