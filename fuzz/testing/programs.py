"""Programs the worker-level tests send: one call per row count at a small in-contract shape."""
from __future__ import annotations

from fuzz.search.strategies import Case
from fuzz.submission.program import Program


def calls_at_rows(rows, poison: str | None = None, n: int = 64, k: int = 64, seed: int = 1) -> Program:
    """``d<m> = inputs(M=m, N=n, K=k)``, ``y<m> = custom_kernel(d<m>)`` for each m of ``rows`` (after a poison
    step when ``poison`` names a pattern)."""
    program = Program()
    if poison:
        program.poison(poison)
    for m in rows:
        program.build(f"d{m}", Case(m, n, k, seed=seed))
        program.call(f"d{m}", f"y{m}")
    return program
