"""What a program's records say about the calls that raised (fuzz/submission/run_records.py)."""
from __future__ import annotations

from fuzz.submission.provenance import describe_exception
from fuzz.submission.run_records import count_calls, error_line


class SourceExcerptError(Exception):
    """As Triton's CompilationError: the message is where in the kernel, the cause is what went wrong."""


def _raised() -> dict:
    try:
        try:
            raise ValueError("kernel uses gfx950 inline asm 'v_cvt_scalef32_pk_fp4_bf16': NVIDIA cannot compile it")
        except ValueError as inner:
            raise SourceExcerptError("at 105:16:\n        other=0,\n        cache_modifier=cache_modifier,") from inner
    except SourceExcerptError as error:
        return describe_exception(error, __file__)


def test_a_wrapped_error_names_its_cause_first():
    line = error_line(_raised())
    assert line.startswith("ValueError: kernel uses gfx950 inline asm"), line
    assert "(raised inside SourceExcerptError: at 105:16:)" in line


def test_a_plain_error_is_its_type_and_message():
    assert error_line({"type": "RuntimeError", "message": "K % 256 != 0", "chain": []}) == "RuntimeError: K % 256 != 0"


def test_the_calls_counted_keep_the_last_error_line():
    stats = {"returned": 0, "raised": 0, "last_error": ""}
    count_calls(stats, [{"exception": _raised()}, {"file": "y.pt"}])
    assert stats["raised"] == 1 and stats["returned"] == 1 and stats["last_error"].startswith("ValueError:")
