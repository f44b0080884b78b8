"""aiter.ops.triton.utils._triton.pid_preprocessing.pid_grid: program id -> output tile."""
import triton
import triton.language as tl


@triton.jit
def pid_grid(pid, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr = 1):
    """Row-major tiles, or GROUP_SIZE_M tile rows walked column by column (for L2 reuse); a bijection either way."""
    if GROUP_SIZE_M == 1:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        tiles_per_group = GROUP_SIZE_M * num_pid_n
        first_pid_m = (pid // tiles_per_group) * GROUP_SIZE_M
        rows_in_group = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (pid % tiles_per_group) % rows_in_group
        pid_n = (pid % tiles_per_group) // rows_in_group
    return pid_m, pid_n
