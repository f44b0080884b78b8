"""The CPU tier's stand-in for the CUDA device (reference/emulation/cuda_on_cpu.py), exercised in a
fresh interpreter: installing it changes process-wide torch state, which must not leak into the suite."""
from __future__ import annotations

import pytest
import torch

from fuzz.testing.fresh_process import run_fresh

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the stand-in is for machines without a GPU")


def run_script(body: str):
    return run_fresh("import kernels\nfrom reference.emulation import cuda_on_cpu\nassert cuda_on_cpu.install()\n", body)


def test_tensors_put_on_cuda_live_on_the_cpu():
    result = run_script("""
        import torch
        a = torch.zeros(32, 8192, dtype=torch.bfloat16, device="cuda")
        b = torch.empty((2, 3), device=torch.device("cuda", 0))
        c = torch.randn(4).cuda()
        d = torch.ones(4).to("cuda", torch.float16)
        e = torch.ones(4).to(device="cuda:0", non_blocking=True)
        f = torch.ones(4).pin_memory()
        torch.set_default_device("cuda")
        g = torch.arange(3)
        torch.set_default_device("cpu")
        print([t.device.type for t in (a, b, c, d, e, f, g)], d.dtype)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\\n")[0].strip() == "['cpu', 'cpu', 'cpu', 'cpu', 'cpu', 'cpu', 'cpu'] torch.float16"


def test_the_runner_api_answers_as_on_an_mi355x():
    result = run_script("""
        import torch
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        p = torch.cuda.get_device_properties(0)
        print(p.name, p.gcnArchName, p.multi_processor_count, torch.cuda.get_device_name())
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.ones(1000, device="cuda") * 2
        torch.cuda.current_stream().wait_stream(s)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); y = x @ x; end.record(); end.synchronize()
        print(start.elapsed_time(end) >= 0, float(y))
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "AMD Instinct MI355X gfx950:sramecc+:xnack- 256 AMD Instinct MI355X"
    assert lines[1] == "True 4000.0"


def test_what_is_not_modelled_raises_one_clear_error_naming_the_api():
    result = run_script("""
        import torch
        torch.cuda.get_rng_state()
    """)
    assert result.returncode != 0
    assert "NotModelledOnCpu" in result.stderr and "get_rng_state" in result.stderr
    assert "not compiled with CUDA" not in result.stderr
    result = run_script("""
        import torch
        torch.cuda.set_device(1)
    """)
    assert "NotModelledOnCpu" in result.stderr and "cuda:0" in result.stderr


def test_a_graph_replays_its_captured_ops_and_launches_on_the_captured_tensors():
    result = run_script("""
        import torch, triton, triton.language as tl

        @triton.jit
        def add_one(x_ptr, y_ptr, N: tl.constexpr):
            i = tl.arange(0, N)
            tl.store(y_ptr + i, tl.load(x_ptr + i) + 1)

        static_in = torch.zeros(8, device="cuda")
        out_triton = torch.empty(8, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out_torch = static_in * 2
            add_one[(1,)](static_in, out_triton, N=8)
        static_in.copy_(torch.arange(8.0))          # new values in the captured tensor
        g.replay()
        print(out_torch.tolist() == (torch.arange(8.0) * 2).tolist(), out_triton.tolist() == (torch.arange(8.0) + 1).tolist())
        moved = torch.full((8,), 5.0)                # a new tensor: a replay does not see it
        g.replay()
        print(out_torch.tolist() == (torch.arange(8.0) * 2).tolist())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]
