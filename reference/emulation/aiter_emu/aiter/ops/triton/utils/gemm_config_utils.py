"""aiter.ops.triton.utils.gemm_config_utils.get_gemm_config, reading aiter's JSON config files.

aiter reads ``configs/gemm/gfx950-<name>[-N=<N>-K=<K>].json`` under ``AITER_TRITON_CONFIGS_PATH``
(utils/core.py). The emulation seeds that directory with the defaults and the one specialised table
that competition shapes hit on the preshuffle path; the other specialised tables only change tiling
and split-K, i.e. which programs add which fp32 partials (docs/aiter_emulation.md). A file a submission
writes there is read as aiter reads it.
"""
import functools
import json
import os

from .core import AITER_TRITON_CONFIGS_PATH

STANDARD_M_BOUNDS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)


def _config(bm, bn, bk, group_m, warps, stages, waves, nonkdim, cache_modifier, ksplit):
    return dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=group_m, num_warps=warps,
                num_stages=stages, waves_per_eu=waves, matrix_instr_nonkdim=nonkdim,
                cache_modifier=cache_modifier, NUM_KSPLIT=ksplit)


_A16WFP4_SMALL = _config(4, 128, 512, 1, 4, 1, 2, 16, ".cg", 1)
_A16WFP4_LARGE = _config(8, 128, 512, 1, 8, 1, 2, 16, ".cg", 1)
_SPLIT_2112_7168 = _config(16, 128, 512, 1, 4, 1, 2, 16, None, 14)

# (config name, (N, K) or None for the default file) -> {"M_LEQ_x" | "any": config}
_TABLES = {
    ("GEMM-A16WFP4_PRESHUFFLED", None): {"any": _config(32, 64, 512, 1, 8, 1, 2, 16, None, 1)},
    ("GEMM-A16WFP4_PRESHUFFLED", (2112, 7168)): {
        "M_LEQ_8": _config(8, 128, 512, 1, 4, 1, 1, 16, ".cg", 14),
        "M_LEQ_16": _config(16, 128, 512, 1, 4, 1, 1, 16, ".cg", 14),
        "M_LEQ_32": _SPLIT_2112_7168,
        "M_LEQ_64": _SPLIT_2112_7168,
        "M_LEQ_128": _config(32, 128, 512, 1, 4, 1, 2, 16, None, 14),
        "M_LEQ_256": _config(32, 128, 512, 1, 4, 1, 2, 16, None, 14),
        "any": _config(32, 128, 256, 4, 2, 2, 2, 16, None, 1),
    },
    ("GEMM-A16WFP4", None): {
        "M_LEQ_8": _A16WFP4_SMALL,
        "M_LEQ_16": _A16WFP4_SMALL,
        "M_LEQ_32": _A16WFP4_LARGE,
        "M_LEQ_64": _A16WFP4_LARGE,
        "M_LEQ_128": _A16WFP4_LARGE,
        "M_LEQ_256": _A16WFP4_LARGE,
        "any": _config(8, 128, 512, 1, 8, 1, 2, 16, None, 1),
    },
    ("GEMM-AFP4WFP4", None): {
        "M_LEQ_16": _config(16, 128, 256, 1, 4, 2, 3, 16, None, 16),
        "M_LEQ_32": _config(32, 128, 256, 1, 4, 2, 3, 16, ".cg", 1),
        "M_LEQ_64": _config(64, 256, 256, 1, 4, 3, 2, 32, None, 1),
        "M_LEQ_128": _config(128, 256, 256, 1, 4, 3, 2, 32, None, 1),
        "M_LEQ_256": _config(128, 256, 256, 2, 4, 3, 2, 32, None, 1),
        "any": _config(256, 256, 256, 2, 8, 2, 1, 32, None, 1),
    },
}


def _file_name(config_name: str, nk) -> str:
    return f"gfx950-{config_name}.json" if nk is None else f"gfx950-{config_name}-N={nk[0]}-K={nk[1]}.json"


def _seed_tables() -> None:
    """The emulation's tables as aiter's JSON files in AITER_TRITON_CONFIGS_PATH/gemm (kept if present:
    a file a submission wrote wins, as on the runner)."""
    folder = os.path.join(AITER_TRITON_CONFIGS_PATH, "gemm")
    os.makedirs(folder, exist_ok=True)
    for (config_name, nk), table in _TABLES.items():
        path = os.path.join(folder, _file_name(config_name, nk))
        if not os.path.exists(path):
            with open(path, "w") as f:
                json.dump(table, f, indent=1)


_seed_tables()
_config_cache: dict = {}  # aiter's: each file is read once per process


def _load(key: str, path: str, must_exist: bool) -> bool:
    if key in _config_cache:
        return True
    if not os.path.exists(path):
        if must_exist:
            raise AssertionError(f"Required config file doesn't exist: {path}")
        return False
    with open(path) as f:
        _config_cache[key] = json.load(f)
    return True


@functools.lru_cache(maxsize=1024)
def get_gemm_config(config_name: str, M: int, N: int | None = None, K: int | None = None,
                    bounds: tuple | None = None, specialized_filename: str | None = None):
    """(a fresh config dict, whether it came from a shape-specialised file), read as aiter reads them:
    ``gemm/gfx950-<name>.json`` must exist; ``-N=<N>-K=<K>`` (or ``-<specialized_filename>``) wins when
    present; M_LEQ_x keys in bound order, then M_GEQ_x in reverse, then "any". K is in elements."""
    assert M >= 0, "M must be positive."
    assert N is None or N > 0, "N must be positive when provided."
    assert K is None or K > 0, "K must be positive when provided."
    folder = os.path.join(AITER_TRITON_CONFIGS_PATH, "gemm")
    default_key = f"gfx950-{config_name}"
    _load(default_key, os.path.join(folder, f"{default_key}.json"), must_exist=True)
    key = default_key
    if specialized_filename is not None:
        candidate = f"{default_key}-{specialized_filename}"
    elif N is not None and K is not None:
        candidate = f"{default_key}-N={N}-K={K}"
    else:
        candidate = None
    if candidate is not None and _load(candidate, os.path.join(folder, f"{candidate}.json"), must_exist=False):
        key = candidate
    table = _config_cache[key]
    search = bounds or STANDARD_M_BOUNDS
    for bound in search:
        if M <= bound and f"M_LEQ_{bound}" in table:
            return dict(table[f"M_LEQ_{bound}"]), key != default_key
    for bound in reversed(search):
        if M >= bound and f"M_GEQ_{bound}" in table:
            return dict(table[f"M_GEQ_{bound}"]), key != default_key
    if "any" in table:
        return dict(table["any"]), False
    raise KeyError(f"No matching configuration found for M={M}, N={N}, K={K} in config '{config_name}'.")
