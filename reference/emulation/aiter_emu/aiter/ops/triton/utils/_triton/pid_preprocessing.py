"""aiter.ops.triton.utils._triton.pid_preprocessing: program id -> output tile, as aiter computes it.

``split_k_tile`` is not aiter's: it is the prologue aiter writes out in each of its GEMM kernels.
"""
from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before Triton is imported: it fixes interpreted vs compiled at decoration

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def remap_xcd(pid, GRID_MN, NUM_XCDS: tl.constexpr = 8):
    """Renumber programs so that each of the NUM_XCDS dies (which the hardware deals programs to round
    robin, pid % NUM_XCDS) gets one contiguous run of tiles; a permutation of [0, GRID_MN)."""
    per_die = (GRID_MN + NUM_XCDS - 1) // NUM_XCDS
    # dies that get per_die programs; the others get one fewer
    full_dies = GRID_MN % NUM_XCDS
    full_dies = NUM_XCDS if full_dies == 0 else full_dies
    die = pid % NUM_XCDS
    rank = pid // NUM_XCDS
    if die < full_dies:
        pid = die * per_die + rank
    else:
        pid = full_dies * per_die + (die - full_dies) * (per_die - 1) + rank
    return pid


@triton.jit
def pid_grid(pid, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr = 1):
    """Row-major tiles, or GROUP_SIZE_M tile rows walked column by column (for L2 reuse).

    aiter takes the row as ``pid % group_rows`` where Triton's tutorial takes ``(pid % tiles_per_group) %
    group_rows``; in a last, shorter group that is another order of the same tiles, still a bijection."""
    if GROUP_SIZE_M == 1:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        tiles_per_group = GROUP_SIZE_M * num_pid_n
        first_pid_m = (pid // tiles_per_group) * GROUP_SIZE_M
        group_rows = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (pid % group_rows)
        pid_n = (pid % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def split_k_tile(pid_unified, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                 GROUP_SIZE_M: tl.constexpr, NUM_KSPLIT: tl.constexpr):
    """(pid_m, pid_n, pid_k) of a GEMM program: the K split fastest, then the output tile (grouped along M
    when K is not split, row-major when it is)."""
    pid_k = pid_unified % NUM_KSPLIT
    pid = pid_unified // NUM_KSPLIT
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    if NUM_KSPLIT == 1:
        pid_m, pid_n = pid_grid(pid, num_pid_m, num_pid_n, GROUP_SIZE_M=GROUP_SIZE_M)
    else:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    return pid_m, pid_n, pid_k
