#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission whose every call raises (a wrong assumption about the inputs).

It loads, so `loads` passes; `contract` and `official` fail with the exception; the verdicts that need
a successful call are not reached, and the report says so quickly rather than running out of examples.
"""
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A = data[0]
    if A.dtype is not None:
        raise RuntimeError("this kernel expects A pre-quantized to fp4x2 (it is bf16 in the task)")
    return A
