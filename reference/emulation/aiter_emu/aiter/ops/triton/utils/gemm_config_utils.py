"""aiter.ops.triton.utils.gemm_config_utils.get_gemm_config over the gfx950 tables the emulated GEMMs use.

aiter reads ``configs/gemm/gfx950-<name>[-N=<N>-K=<K>].json``. Only the defaults and the one specialised
table that competition shapes hit on the preshuffle path are carried here; the other specialised tables
only change tiling and split-K, i.e. which programs add which fp32 partials (docs/aiter_emulation.md).
"""
import functools

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


@functools.lru_cache(maxsize=1024)
def get_gemm_config(config_name: str, M: int, N: int | None = None, K: int | None = None,
                    bounds: tuple | None = None, specialized_filename: str | None = None):
    """(a fresh config dict, whether it came from a shape-specialised table). K is in elements."""
    assert M >= 0, "M must be positive."
    assert N is None or N > 0, "N must be positive when provided."
    assert K is None or K > 0, "K must be positive when provided."
    if (config_name, None) not in _TABLES:
        raise AssertionError(f"Required config file doesn't exist: gfx950-{config_name}.json (not emulated)")
    specialised = _TABLES.get((config_name, (N, K))) if specialized_filename is None else None
    table = specialised or _TABLES[(config_name, None)]
    for bound in bounds or STANDARD_M_BOUNDS:
        if M <= bound and f"M_LEQ_{bound}" in table:
            return dict(table[f"M_LEQ_{bound}"]), specialised is not None
    return dict(table["any"]), False
