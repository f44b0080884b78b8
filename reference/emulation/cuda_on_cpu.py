"""The CUDA device on a machine without one: what a submission sees of ``torch.cuda`` on the CPU tier.

Real submissions hard-code the runner's device: ``torch.zeros(..., device="cuda")`` prewarms at import,
``.cuda()`` / ``.to("cuda")``, ``torch.cuda.synchronize()``, streams and events for timing,
``torch.cuda.get_device_properties(0).multi_processor_count`` for occupancy models, CUDA/HIP graph
capture and replay. On the runner all of that is legal; with a CPU-only torch each raises "Torch not
compiled with CUDA enabled" and the suite would report the file as broken.

``install()`` (the submission worker calls it on a machine without a GPU, after our own modules chose
the CPU tier) makes "cuda" an alias of the CPU for tensors and models the ``torch.cuda`` API the runner
offers, with MI355X figures:

- tensors: a ``device=`` of "cuda", "cuda:N" or ``torch.device("cuda")`` on any factory, ``.to(...)``,
  ``.cuda()``, ``torch.set_default_device("cuda")``: the tensor lives on the CPU (a torch function mode);
  ``pin_memory`` is a no-op;
- ``is_available`` (True), ``device_count`` (1), ``current_device``/``set_device``/``device(...)``,
  ``get_device_properties``/``get_device_name``/``get_device_capability``/``get_arch_list``,
  ``synchronize``, ``empty_cache``, ``manual_seed(_all)``, the memory counters (0);
- ``Stream``/``current_stream``/``default_stream``/``stream(...)``: one in-order queue (the CPU runs
  every op when it is issued, so every wait is already satisfied);
- ``Event(enable_timing=True)``: ``record`` takes the host clock, ``elapsed_time`` returns milliseconds
  between two records (plausible, not a GPU time);
- ``CUDAGraph`` / ``graph(...)``: capture records the ATen ops and Triton launches issued inside the
  block with the tensors they used; ``replay()`` runs them again on those same tensors, so a replay
  after the inputs were refilled in place sees the new values, and one whose inputs moved does not
  (the hazard a real graph has).

Whatever is not modelled raises ``NotModelledOnCpu`` naming the API, never the bare "not compiled
with CUDA" assertion. ``installed()`` says whether the stand-in is active (the report says the device
was emulated).
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode


class NotModelledOnCpu(RuntimeError):
    """A CUDA API the CPU tier's stand-in does not model."""


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns on the runner (AMD Instinct MI355X, ROCm)."""

    name: str = "AMD Instinct MI355X"
    gcnArchName: str = "gfx950:sramecc+:xnack-"
    major: int = 9
    minor: int = 5
    multi_processor_count: int = 256
    total_memory: int = 288 * 1024**3
    warp_size: int = 64
    max_threads_per_multi_processor: int = 2048
    regs_per_multiprocessor: int = 65536
    L2_cache_size: int = 4 * 1024**2
    is_integrated: int = 0
    is_multi_gpu_board: int = 0
    uuid: str = "00000000-0000-0000-0000-000000000000"


PROPERTIES = DeviceProperties()
_state = {"installed": False, "undo": []}
_capture = threading.local()  # .graph: the CUDAGraph being captured on this thread, if any


def _is_cuda(device) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return False


def _map_device(device):
    return torch.device("cpu") if _is_cuda(device) else device


class _CudaIsCpu(TorchFunctionMode):
    """Rewrites every "cuda" device argument to the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _map_device(kwargs["device"])
        kwargs.pop("pin_memory", None)
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.pin_memory:
            return args[0]
        if func is torch.Tensor.to:
            args = tuple(_map_device(a) for a in args)
        if func is torch.Tensor.is_pinned:
            return True
        return func(*args, **kwargs)  # forwards: the real op, on the CPU


# ---------------------------------------------------------------------------------------------------
# Streams, events, graphs


class Stream:
    """One in-order queue: ops run when issued, so synchronisation is immediate."""

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("cuda", 0)
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event if event is not None else Event()
        event.record(self)
        return event

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0


_DEFAULT_STREAM = Stream()


class Event:
    """Host-clock timestamps: ``elapsed_time`` is plausible milliseconds, not a GPU measurement."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._time = None

    def record(self, stream=None):
        self._time = time.perf_counter()

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time")
        return (end_event._time - self._time) * 1000.0


class _Recorder(TorchDispatchMode):
    """Records the ATen ops issued during a capture (outside Triton launches, which record themselves)."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)  # forwards: the real op, recorded
        if not self.graph._in_launch:
            self.graph._ops.append(("aten", func, args, kwargs, out))
        return out


class CUDAGraph:
    """Capture records ops and launches with their tensors; ``replay`` re-issues them on those tensors."""

    def __init__(self, keep_graph=False):
        self._ops: list = []
        self._in_launch = False
        self._recorder = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        if getattr(_capture, "graph", None) is not None:
            raise RuntimeError("a CUDA graph capture is already under way on this thread")
        self._ops = []
        _capture.graph = self
        self._recorder = _Recorder(self)
        self._recorder.__enter__()

    def capture_end(self):
        self._recorder.__exit__(None, None, None)
        self._recorder = None
        _capture.graph = None

    def replay(self):
        for op in self._ops:
            if op[0] == "aten":
                _, func, args, kwargs, out = op
                _replay_aten(func, args, kwargs, out)
            else:
                _, launch = op
                launch()

    def reset(self):
        self._ops = []

    def pool(self):
        return (0, 0)

    def enable_debug_mode(self):
        pass

    def debug_dump(self, path):
        pass


def _replay_aten(func, args, kwargs, captured_out):
    result = func(*args, **kwargs)
    schema_returns = getattr(getattr(func, "_schema", None), "returns", ())
    outs = captured_out if isinstance(captured_out, (tuple, list)) else (captured_out,)
    results = result if isinstance(result, (tuple, list)) else (result,)
    for i, (target, value) in enumerate(zip(outs, results)):
        aliased = i < len(schema_returns) and schema_returns[i].alias_info is not None
        if isinstance(target, torch.Tensor) and isinstance(value, torch.Tensor) and not aliased \
                and target is not value:
            target.copy_(value)  # an allocating op writes into the tensor the capture handed out


def record_launch(run_again) -> bool:
    """Called by a Triton launch hook: inside a capture, remember how to launch again; True if recorded."""
    graph = getattr(_capture, "graph", None)
    if graph is None:
        return False
    graph._ops.append(("launch", run_again))
    return True


@contextlib.contextmanager
def launching():
    """Ops a Triton launch issues internally are part of the launch, not separate graph nodes."""
    graph = getattr(_capture, "graph", None)
    if graph is None:
        yield
        return
    graph._in_launch, before = True, graph._in_launch
    try:
        yield
    finally:
        graph._in_launch = before


class graph:  # noqa: N801  (torch.cuda.graph is a lowercase class)
    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        self.cuda_graph = cuda_graph

    def __enter__(self):
        self.cuda_graph.capture_begin()
        return self.cuda_graph

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False


# ---------------------------------------------------------------------------------------------------
# torch.cuda functions


@contextlib.contextmanager
def _stream_context(stream=None):
    yield stream


class _DeviceContext:
    def __init__(self, device):
        self.idx = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _check_index(device=None):
    index = device.index if isinstance(device, torch.device) else device
    if isinstance(index, str):
        index = torch.device(index).index
    if index not in (None, 0):
        raise NotModelledOnCpu(f"the CPU tier models one device (cuda:0); the submission asked for {device!r}")


def _properties(device=None):
    _check_index(device)
    return PROPERTIES


def _name(device=None):
    _check_index(device)
    return PROPERTIES.name


MODELLED = {
    "is_available": lambda: True,
    "is_initialized": lambda: True,
    "init": lambda: None,
    "device_count": lambda: 1,
    "current_device": lambda: 0,
    "set_device": lambda device: _check_index(device),
    "device": _DeviceContext,
    "get_device_properties": _properties,
    "get_device_name": _name,
    "get_device_capability": lambda device=None: (PROPERTIES.major, PROPERTIES.minor),
    "get_arch_list": lambda: ["gfx950"],
    "synchronize": lambda device=None: None,
    "empty_cache": lambda: None,
    "manual_seed": lambda seed: None,
    "manual_seed_all": lambda seed: None,
    "seed": lambda: None,
    "memory_allocated": lambda device=None: 0,
    "max_memory_allocated": lambda device=None: 0,
    "memory_reserved": lambda device=None: 0,
    "max_memory_reserved": lambda device=None: 0,
    "reset_peak_memory_stats": lambda device=None: None,
    "mem_get_info": lambda device=None: (PROPERTIES.total_memory, PROPERTIES.total_memory),
    "Stream": Stream,
    "Event": Event,
    "current_stream": lambda device=None: _DEFAULT_STREAM,
    "default_stream": lambda device=None: _DEFAULT_STREAM,
    "stream": _stream_context,
    "set_stream": lambda stream: None,
    "CUDAGraph": CUDAGraph,
    "graph": graph,
    "graph_pool_handle": lambda: (0, 0),
    "is_current_stream_capturing": lambda: getattr(_capture, "graph", None) is not None,
}


def _not_modelled_lazy_init(*args, **kwargs):
    caller = "torch.cuda"
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("torch.cuda"):
            caller = f"{module}.{frame.f_code.co_name}"
        elif not module.startswith("torch"):
            break
        frame = frame.f_back
    raise NotModelledOnCpu(f"{caller} is not modelled on the CPU tier (no GPU here; modelled: "
                           f"{', '.join(sorted(MODELLED))} and tensors on 'cuda')")


def _hook_triton_launches(undo) -> None:
    """Interpreted Triton launches inside a capture become graph nodes (re-launched on replay)."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - triton is a dependency
        return
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        with launching():
            result = original(self, *args, grid=grid, warmup=warmup, **kwargs)  # forwards
        if not warmup:
            record_launch(lambda: original(self, *args, grid=grid, warmup=warmup, **kwargs))
        return result

    undo.append((InterpretedFunction, "run", original))
    InterpretedFunction.run = run


def install() -> bool:
    """Make "cuda" the CPU for this process (no-op where a GPU is visible); idempotent. True if active."""
    if _state["installed"]:
        return True
    if torch.cuda.is_available():
        return False
    undo = _state["undo"]
    cuda = torch.cuda
    for name, value in MODELLED.items():
        undo.append((cuda, name, getattr(cuda, name, None)))
        setattr(cuda, name, value)
    undo.append((cuda, "_lazy_init", cuda._lazy_init))
    cuda._lazy_init = _not_modelled_lazy_init
    # set_default_device("cuda") and `with torch.device("cuda")` push a DeviceContext at the bottom of
    # the mode stack, below ours: it must name the CPU itself
    from torch.utils import _device

    context_init = _device.DeviceContext.__init__

    def device_context_init(self, device):
        context_init(self, _map_device(device) if not isinstance(device, int) else "cpu")  # forwards

    undo.append((_device.DeviceContext, "__init__", context_init))
    _device.DeviceContext.__init__ = device_context_init
    _hook_triton_launches(undo)
    mode = _CudaIsCpu()
    mode.__enter__()
    _state["mode"] = mode
    _state["installed"] = True
    return True


def uninstall() -> None:
    if not _state["installed"]:
        return
    _state.pop("mode").__exit__(None, None, None)
    for obj, name, value in reversed(_state["undo"]):
        setattr(obj, name, value)
    _state["undo"].clear()
    _state["installed"] = False


def installed() -> bool:
    return _state["installed"]
