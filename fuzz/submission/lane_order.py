"""The HIP lane-order doubt: whether a wrong or differing output of the file's HIP, run on the CPU model of
gfx950, rests only on the order in which a wave's lanes ran.

The model runs the lanes of a wave one after another between lane operations, where gfx950 runs them in
lockstep. So a program whose calls ran HIP on the model runs again three times: each wave's lanes reversed,
rotated by half a wave, and in order with every block's LDS starting as 0x00 bytes instead of 0xFF. The last
catches what no order shows: a one-wave block that writes LDS and reads its other lanes' values with no
barrier (legal in lockstep; CaptnJackSparrow 3309c00 skips __syncthreads for one wave, runner max error 0.0)
reads the fill in every order here, beside elements that do change with the order. An element the fill alone
changes may also be LDS nobody ever writes (garbage on the runner too): the model cannot tell the two, so it
is doubted like the rest (a weak spot: such a kernel's failure is NOT RUN, not FAIL). An element whose bits
are the same in all four runs, in every output compared, does not depend on that order (wrong values equal
by chance are rare: on the lockstep example at 256 x 512 x 1024, 147 of 131072 elements in two orders, none
wrong in all three). A failure stands where those
elements alone fail; one that lives only where the order changes the output relies on lockstep (or races
inside a wave), which the runner decides: the verdict is NOT RUN, saying so. A weak spot, said in
docs/hip_cpu.md: three orders of many, not an instruction-level lockstep model.
"""
from __future__ import annotations

import torch

from fuzz.judge.verdicts import official_reference
from fuzz.search.strategies import Case
from fuzz.submission.judged import exact_product, judged_inputs
from fuzz.submission.program import Program


class LaneOrderDoubt:
    """A check's lane-order doubts; ``ctx`` (checks.Context) runs the re-runs (``ctx.execute``) and holds the
    result the outputs come from (``ctx.last_result``). The two re-runs serve every output of a program,
    once per program (official's tests share them)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._cache = None  # (program, its masks)
        self._past_cache = None  # (program, where its outputs do not depend on the bytes past its inputs)
        self.note = ""  # why a failure that changes with the lane order stands (take_note)

    def take_note(self) -> str:
        """The last standing failure's note ("; the output depends on the bytes past ...") once, else ""."""
        note, self.note = self.note, ""
        return note

    def stable(self, program: Program, outputs: dict, names) -> torch.Tensor | None:
        """Where the outputs ``names`` of ``program`` (as ``outputs`` holds them) do not depend on the order of
        a wave's lanes: a bool mask over their elements, or None when no call of theirs ran HIP on the model
        (or the re-runs did not return comparable tensors: nothing to doubt)."""
        records = [outputs.get(name, {}) for name in names]
        if not any(r.get("hip_cpu_launches") for r in records) or not all("file" in r for r in records):
            return None
        return _combined(self._masks(program, outputs), names)

    def _masks(self, program: Program, outputs: dict) -> dict:
        """Output name -> where it is the same in all three lane orders (None: not comparable)."""
        if self._cache is not None and self._cache[0] is program:
            return self._cache[1]
        first = self._first_outputs(outputs)
        masks = self._equal_where(first, [program.with_hip_lanes("reversed"), program.with_hip_lanes("rotated"),
                                          program.with_hip_lds_fill(0x00)])
        self._cache = (program, masks)
        return masks

    def _unaffected_by_past(self, program: Program, outputs: dict, names) -> torch.Tensor | None:
        """Where the outputs ``names`` do not depend on memory the file was not given or nobody wrote: the same
        in one more run in the same lane order with each input followed by 0xA5 bytes. What lies past an input,
        and memory nobody wrote, differ from the first run there (other bytes, another heap history); the
        inputs and what the file writes do not. None when the run is not comparable."""
        if self._past_cache is None or self._past_cache[0] is not program:
            first = self._first_outputs(outputs)
            self._past_cache = (program, self._equal_where(first, [program.with_input_guard(0xA5)]))
        return _combined(self._past_cache[1], names)

    def _first_outputs(self, outputs: dict) -> dict:
        """Output name -> the tensor the program's first run returned (the doubt's runs compare against it)."""
        return {name: self.ctx.last_result.tensor(r).cpu() for name, r in outputs.items() if "file" in r}

    def _equal_where(self, first: dict, programs: list) -> dict:
        """Output name -> where ``first``'s output is bitwise the same in the runs of ``programs`` (None: a run
        did not give a comparable output)."""
        ctx = self.ctx
        masks = {name: torch.ones(y.shape, dtype=torch.bool) for name, y in first.items()}
        kept = ctx.last_result
        try:
            for again_program in programs:
                result, again = ctx.execute(again_program)
                for name, y in first.items():
                    other = again.get(name, {})
                    if masks[name] is None:
                        continue
                    if result.kind != "ok" or "file" not in other:
                        masks[name] = None
                        continue
                    z = result.tensor(other).cpu()
                    if z.shape != y.shape or z.dtype != y.dtype:
                        masks[name] = None
                        continue
                    masks[name] &= _raw(z) == _raw(y)
        finally:
            ctx.last_result = kept
        return masks

    def failure(self, program: Program, outputs: dict, out: str, case: Case, fails) -> str:
        """Why the wrong output ``out`` of ``program`` on ``case`` cannot be judged here, or "" when its failure
        stands: it stands when the elements that do not depend on the lane order (``stable``) alone fail
        ``fails(output)``, the others set to the exact product rounded to bf16 (a wrong kernel, or a race
        between waves). An output wrong only where the order changes it relies on lockstep (or races inside a
        wave), which the runner decides."""
        self.note = ""
        stable = self.stable(program, outputs, [out])
        if stable is None or bool(stable.all()):
            return ""
        y = self.ctx.last_result.tensor(outputs[out]).cpu()
        data, _ = judged_inputs(case)
        exact = official_reference(exact_product(data)).to(y.dtype).cpu()
        if fails(torch.where(stable, y, exact)):
            return ""  # wrong where the order changes nothing: it stands without more runs
        past = self._past(program, outputs, [out], stable)
        if bool(past.any()) and fails(torch.where(stable | past, y, exact)):
            self.note = _past_note(past)
            return ""
        return _note(stable, "is wrong only where its output changes")

    def _past(self, program: Program, outputs: dict, names, stable: torch.Tensor) -> torch.Tensor:
        """Where an output that changes with the lane order changes with the bytes past the inputs too: it reads
        memory it was not given (or nobody wrote), which holds garbage on the runner as well, whatever the
        order of a wave's lanes. Such elements are the file's, not a lane-order doubt."""
        unaffected = self._unaffected_by_past(program, outputs, names)
        if unaffected is None or unaffected.shape != stable.shape:
            return torch.zeros_like(stable)
        return ~unaffected & ~stable

    def difference(self, program: Program, outputs: dict, a: str, b: str) -> str:
        """Why outputs ``a`` and ``b`` of ``program``, which should be bitwise equal but are not, cannot be called
        different here, or "": they differ nowhere outside the elements that depend on the lane order."""
        self.note = ""
        stable = self.stable(program, outputs, [a, b])
        if stable is None or bool(stable.all()):
            return ""
        ya, yb = (self.ctx.last_result.tensor(outputs[n]).cpu() for n in (a, b))
        differ = _raw(ya) != _raw(yb)
        if bool((differ & stable).any()):
            return ""
        past = self._past(program, outputs, [a, b], stable)
        if bool((differ & past).any()):
            self.note = _past_note(past)
            return ""
        return _note(stable, "differs only where its outputs change")


def _note(stable: torch.Tensor, what: str) -> str:
    return (f"the file's HIP {what} ({int((~stable).sum())} of {stable.numel()} elements) when the lanes of each wave "
            "run in another order on the CPU model, or its LDS starts with other bytes: it relies on the lockstep of "
            "a gfx950 wave (or races inside one, or reads LDS no lane wrote), which the CPU model does not run, so "
            "the runner decides")


def _combined(masks: dict, names) -> torch.Tensor | None:
    """Where every output of ``names`` is settled (their masks and-ed), or None when one is not comparable."""
    if any(masks.get(name) is None for name in names) or len({masks[n].shape for n in names}) != 1:
        return None
    combined = masks[names[0]].clone()
    for name in names[1:]:
        combined &= masks[name]
    return combined


def _past_note(past: torch.Tensor) -> str:
    return (f"; not a lane-order doubt: {int(past.sum())} of {past.numel()} elements change in a rerun in the same "
            "lane order with other bytes after each input: the file reads memory past what it was given or what "
            "anyone wrote, which holds garbage on the runner too")


def _raw(t: torch.Tensor) -> torch.Tensor:
    """A tensor's elements as integers of their width, so NaN payloads and -0 compare as bits."""
    t = t.detach().contiguous()
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.view(width)
