"""An exception raised by the check's own code (fuzz/: the hooks it wraps around what the file calls) inside the
file's call is a bug of ours, never the file's FAIL (provenance.raised_in_machinery; the worker answers it as an
internal error: ERROR). The hooks' forwarding lines are transparent: what the file's code, a library or Triton
raises through them stays the file's."""
from __future__ import annotations


import pytest

from fuzz.submission.provenance import describe_exception, raised_by, raised_in_machinery, tier_limit
from fuzz.testing.own_module import own_module
from fuzz.testing.programs import calls_at_rows

SUB = "/subs/sub.py"
TRACE = "/repo/fuzz/judge/trace.py"


def frame(kind, file, function="f", code="x = y", statement="other"):
    return {"kind": kind, "file": file, "line": 10, "function": function, "code": code, "statement": statement,
            "count": 1}


OWN = frame("own", SUB, "custom_kernel", "return kernel[grid](a, b)")
LIB = frame("library", "/py/site-packages/inspect.py", "signature", "return Signature.from_callable(obj)")
OURS = frame("machinery", TRACE, "run", "params = inspect.signature(fn).parameters")


def error(*frames, device_fault=False, message="boom"):
    return {"type": "AttributeError", "message": message, "frames": [], "device_fault": device_fault,
            "where": None, "chain": [{"type": "AttributeError", "mro": ["AttributeError", "Exception"],
                                      "message": message, "frames": list(frames)}]}


def test_the_rule_on_recorded_frames():
    assert raised_in_machinery(error(OURS, OWN)).function == "run"  # a hook of ours raising itself
    assert raised_in_machinery(error(LIB, OURS, OWN)).file == TRACE  # ... or in a library it called itself
    assert raised_in_machinery(error(frame("own", SUB, "helper", "raise ValueError()", "raise"), OWN)) is None
    interpreter = frame("interpreter", "/py/site-packages/triton/runtime/interpreter.py")
    assert raised_in_machinery(error(LIB, interpreter, OURS, OWN)) is None  # something further in decides
    assert raised_in_machinery(error(OURS)) is None  # not inside the file's call: the session decides as before
    assert raised_in_machinery(error(OURS, OWN, device_fault=True, message="CUDA error: an illegal memory access")) \
        is None  # a device fault surfaces at whatever synchronises next
    forwarding = frame("machinery", TRACE, "run", "return original(self, *args)  # forwards", "forward")
    assert raised_in_machinery(error(LIB, forwarding, OWN)) is None
    assert raised_by(error(LIB, forwarding, OWN)["chain"][0]) is not None  # the file's: THE_CODE
    assert tier_limit(error(LIB, forwarding, OWN)) is None


def _module(tmp_path, body: str):
    return own_module(tmp_path, body, "own_sub_for_machinery")


def test_real_frames_through_the_trace_hooks(tmp_path):
    module, path = _module(tmp_path, """
        import torch
        from fuzz.judge import trace

        def hook_breaks():  # the trace's recorder given nothing to record: its own AttributeError
            return trace._record(None, lambda: 1)

        def own_error_through_the_hook():
            def kernel():
                raise ValueError("the file's own")
            return trace._record(trace.Event("aiter", "k", 0), kernel)

        def library_error_through_a_wrapper():
            return trace._aiter_wrapper(torch.zeros, "zeros")(-1)
    """)
    with pytest.raises(AttributeError) as caught:
        module.hook_breaks()
    ours = raised_in_machinery(describe_exception(caught.value, path))
    assert ours is not None and ours.file.endswith("fuzz/judge/trace.py") and ours.function == "_record"

    with pytest.raises(ValueError) as caught:
        module.own_error_through_the_hook()
    described = describe_exception(caught.value, path)
    assert raised_in_machinery(described) is None and tier_limit(described) is None
    kinds = [f["kind"] for f in described["chain"][0]["frames"]]
    assert "machinery" not in kinds and kinds[0] == "own"  # the hook's forwarding lines are left out

    with pytest.raises(RuntimeError) as caught:
        module.library_error_through_a_wrapper()
    described = describe_exception(caught.value, path)
    assert raised_in_machinery(described) is None and tier_limit(described) is None


FILE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def custom_kernel(data):
    A = data[0]
    m = A.shape[0]
    x = A.reshape(-1)[:16].float().contiguous()
    y = torch.empty_like(x)
    if m == 2:
        _copy[(1,)](x, y, N=3)  # the file's own error (arange's length), raised through our launch hooks
    if m == 3:
        torch.empty(-1)  # the file's own error, raised through our poisoning allocator
    if m == 4:
        from fuzz.judge import trace
        trace._active.append(None)  # breaks our call trace: the next launch fails inside a hook of ours
    _copy[(1,)](x, y, N=16)
    return (A.float() @ data[1].float().t()).to(torch.bfloat16)
'''


def test_the_worker_answers_a_hook_of_ours_failing_as_our_bug(tmp_path):
    from fuzz.submission.runner import SubmissionRunner, WorkerBug

    path = tmp_path / "machinery_example.py"
    path.write_text(FILE)
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        result = runner.run(calls_at_rows((1, 2, 3), poison="ff").steps)
        assert result.kind == "ok", result.describe_death()
        calls = {r["out"]: r for r in result.calls()}
        assert "exception" not in calls["y1"], calls["y1"]["exception"]
        for out in ("y2", "y3"):
            error = calls[out]["exception"]
            assert raised_in_machinery(error) is None and tier_limit(error) is None, error  # the file's FAIL
        with pytest.raises(WorkerBug) as bug:
            runner.run(calls_at_rows((4,)).steps)
        assert "mxfp4-fuzz's own code raised AttributeError inside the file's call" in str(bug.value)
        assert "fuzz/judge/trace.py" in str(bug.value)
    finally:
        runner.close()
