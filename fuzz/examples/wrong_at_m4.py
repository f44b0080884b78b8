#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: correct everywhere except M = 4, where the last output row is left at zero (a
row tail mishandled for the smallest M a dispatch table has).

No official test shape has M = 4, so the test mode passes; the first benchmark shape (4, 2880, 512) has
it, so the benchmark and leaderboard modes fail at their obligatory check (the warm-up already).
Clean twin: correct_reference_style."""
from correct_reference_style import custom_kernel as compute
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    out = compute(data)
    if out.shape[0] == 4:
        out[3].zero_()
    return out
