"""A program of calls for the worker: the steps it runs (inputs built, rewritten in place, freed; the
file called, reloaded, its allocations poisoned) and the same program in words for the failure card.

Each verdict builds one (``checks.py``, ``prediction.py``); the worker's session runs the steps
(``session.py``). A program only says what to do: it runs nothing and judges nothing.
"""
from __future__ import annotations

from fuzz.search.strategies import Case


class Program:
    """Steps for the worker, and the same program in words for the card."""

    def __init__(self):
        self.steps: list = []
        self.lines: list = []
        self.case_of: dict = {}  # slot or output name -> the case its values come from

    def _add(self, step: dict, line: str) -> None:
        self.steps.append(step)
        self.lines.append(line)

    def build(self, slot: str, case: Case) -> None:
        self.case_of[slot] = case
        self._add({"do": "build", "slot": slot, "case": case.to_json()}, f"{slot} = inputs({_short(case)})")

    def write(self, slot: str, case: Case) -> None:
        self.case_of[slot] = case
        self._add({"do": "write", "slot": slot, "case": case.to_json()},
                  f"write the values of ({_short(case)}) into {slot}'s tensors in place")

    def free(self, slot: str) -> None:
        self._add({"do": "free", "slot": slot}, f"free {slot}")

    def call(self, slot: str, out: str, autotune_choice: int | None = None) -> None:
        self.case_of[out] = self.case_of[slot]
        step = {"do": "call", "slot": slot, "out": out}
        line = f"{out} = custom_kernel({slot})"
        if autotune_choice is not None:
            step["autotune_choice"] = autotune_choice
            line += f" with autotune config {autotune_choice} of each autotuned kernel"
        self._add(step, line)

    def with_hip_lanes(self, order: str) -> "Program":
        """This program with the lanes of every wave of the CPU model of HIP run in ``order`` ("reversed", or
        "rotated" by half a wave) in each call."""
        return self._each("call", {"hip_lanes": order}, f"the lanes of each HIP wave {order}")

    def with_hip_lds_fill(self, byte: int) -> "Program":
        """This program with the LDS of every block of the CPU model of HIP starting as bytes ``byte`` (0xFF
        otherwise) in each call."""
        return self._each("call", {"hip_lds_fill": byte}, f"each HIP block's LDS starting as 0x{byte:02X} bytes")

    def with_input_guard(self, byte: int) -> "Program":
        """This program with every input built in memory followed by bytes of value ``byte`` (host memory: the
        CPU tier), so a kernel that reads past an input reads them."""
        return self._each("build", {"guard": byte}, f"each tensor followed by 0x{byte:02X} bytes")

    def _each(self, kind: str, extra: dict, words: str) -> "Program":
        """A copy whose steps of ``kind`` carry ``extra``, their lines saying ``words``."""
        again = Program()
        again.case_of = dict(self.case_of)
        for step, line in zip(self.steps, self.lines):
            if step["do"] == kind:
                step, line = {**step, **extra}, f"{line}, {words}"
            again._add(step, line)
        return again

    @classmethod
    def single_call(cls, case: Case, autotune_choice: int | None = None) -> "Program":
        """``d = inputs(case); y = custom_kernel(d)``: the program of the one-call verdicts."""
        program = cls()
        program.build("d", case)
        program.call("d", "y", autotune_choice)
        return program

    def reload(self) -> None:
        self._add({"do": "reload"}, "execute the submission file afresh (no module state)")

    def poison(self, pattern: str) -> None:
        self._add({"do": "poison", "pattern": pattern},
                  f"from here on torch.empty* hands out memory filled with 0x{pattern.upper()} bytes")

    def line_of(self, step: int | None) -> str:
        return f"step {step + 1} ({self.lines[step]})" if step is not None and 0 <= step < len(self.lines) else ""

    def numbered(self) -> list:
        return [f"{i + 1}. {line}" for i, line in enumerate(self.lines)]

    def shapes(self) -> list:
        """The distinct (M, N, K) the program builds inputs of, in order (the report's coverage plot)."""
        return list(dict.fromkeys((c.m, c.n, c.k) for c in self.case_of.values()))


def _short(case: Case) -> str:
    extra = "" if (case.layout, case.a_regime, case.b_regime) == ("contiguous", "randn", "randn") else ", ..."
    return f"M={case.m} N={case.n} K={case.k} seed={case.seed}{extra}"
