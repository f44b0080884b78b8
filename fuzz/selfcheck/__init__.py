"""Checks of the suite itself: shipped mutants it must kill, the NaN table, the interpreter against compiled Triton, the tier-fidelity catalogue."""
