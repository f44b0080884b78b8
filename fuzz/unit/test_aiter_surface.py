"""What real aiter (f3be04a12a0c, the runner's) has and the emulation lacks is an error naming it, never a bare
ModuleNotFoundError; aiter's config directory exists and a JSON file written there is read as aiter
reads it. Runs in a fresh interpreter: selecting an aiter changes process-wide imports."""
from __future__ import annotations

from fuzz.testing.fresh_process import ROOT, run_fresh


def run_script(body: str):
    return run_fresh("from reference.emulation.select import use_aiter\nuse_aiter('emulated')\nimport aiter\n", body)


def test_a_real_aiter_module_or_name_the_emulation_lacks_is_named():
    result = run_script("""
        for statement in ("import aiter.ops.triton.gemm.basic.gemm_a8w8", "import aiter.never_existed",
                          "aiter.rmsnorm2d_fwd", "aiter.never_existed_either"):
            try:
                exec(statement)
            except Exception as e:
                print(type(e).__name__, "|", e)
        print(hasattr(aiter, "rmsnorm2d_fwd"))
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("AiterNotEmulated | uses aiter module aiter.ops.triton.gemm.basic.gemm_a8w8 (in aiter f3be04a12a0c)")
    assert lines[1].startswith("ModuleNotFoundError")  # aiter never had it: on the runner it fails too
    assert lines[2].startswith("AiterAttributeNotEmulated | uses aiter.rmsnorm2d_fwd")
    assert lines[3].startswith("AttributeError")
    assert lines[4] == "False"


def test_a_config_file_written_to_aiters_config_path_is_read_as_aiter_reads_it():
    result = run_script("""
        import json, os
        from aiter.ops.triton.utils.core import AITER_TRITON_CONFIGS_PATH
        from aiter.ops.triton.utils.gemm_config_utils import get_gemm_config
        print(sorted(os.listdir(os.path.join(AITER_TRITON_CONFIGS_PATH, "gemm")))[:2])
        mine = dict(BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=256, GROUP_SIZE_M=1, num_warps=4, num_stages=1,
                    waves_per_eu=1, matrix_instr_nonkdim=16, cache_modifier=None, NUM_KSPLIT=3)
        with open(os.path.join(AITER_TRITON_CONFIGS_PATH, "gemm", "gfx950-GEMM-A16WFP4-N=128-K=512.json"), "w") as f:
            json.dump({"M_LEQ_16": mine}, f)
        print(get_gemm_config("GEMM-A16WFP4", 8, 128, 512))
        print(get_gemm_config("GEMM-A16WFP4", 8, 256, 512)[0]["NUM_KSPLIT"])
        print(str(ROOT) not in AITER_TRITON_CONFIGS_PATH)
    """.replace("ROOT", repr(str(ROOT))))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "['gfx950-GEMM-A16WFP4.json', 'gfx950-GEMM-A16WFP4_PRESHUFFLED-N=2112-K=7168.json']"
    assert "'NUM_KSPLIT': 3" in lines[1] and lines[1].endswith("True)")  # the written, shape-specialised file
    assert lines[2] == "1"  # another shape: the default table
    assert lines[3] == "True"  # never our source tree


def test_top_level_names_real_files_reach_are_there():
    """aiter's top level has fp4_utils (through ops.quant's imports): a real file calls aiter.fp4_utils.e8m0_shuffle."""
    result = run_script("""
        from aiter.utility import fp4_utils
        print(aiter.fp4_utils is fp4_utils, callable(aiter.fp4_utils.e8m0_shuffle))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
