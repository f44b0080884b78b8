"""Hypothesis settings profiles, chosen with ``--profile``.

smoke: the default on CPU, a quick pre-submission check; ci: more examples, still CPU-sized;
deep: long exploration; gpu: compiled kernels are fast, so many more examples.
"""
from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, Phase, settings

_COMMON = dict(
    deadline=None,  # interpreter timings vary by an order of magnitude between first and later calls
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
PROFILES = {
    "smoke": dict(max_examples=20, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]),
    "ci": dict(max_examples=30),
    "deep": dict(max_examples=400),
    "gpu": dict(max_examples=200),
}
# Shape caps per profile: the CPU interpreter costs ~0.1 s per program, so smoke stays tiny.
SHAPE_CAPS = {
    "smoke": dict(max_m=16, max_n=128, max_k=512),
    "ci": dict(max_m=24, max_n=192, max_k=768),
    "deep": dict(max_m=40, max_n=256, max_k=1024),
    "gpu": dict(max_m=256, max_n=2048, max_k=4096),
}
# Production K (fuzz.search.strategies.production_shapes): K up to 8192 with thin N and small M, drawn for
# ``share`` percent of the examples of the kernels/ tests that use it (an interpreted call costs about
# 0.2 to 2 s there, measured on the 2-core CPU: see the README) and ``submission_share`` percent of a
# submission's correctness, contract and determinism examples (a bug there must show in 20 examples).
PRODUCTION_CAPS = {
    "smoke": dict(max_m=16, max_n=64, max_k=8192, share=10, submission_share=40),
    "ci": dict(max_m=24, max_n=192, max_k=8192, share=25, submission_share=40),
    "deep": dict(max_m=40, max_n=256, max_k=8192, share=25, submission_share=40),
    "gpu": dict(max_m=256, max_n=2048, max_k=16384, share=25, submission_share=40),
}
_active = "smoke"

for _name, _kw in PROFILES.items():
    settings.register_profile(_name, **{**_COMMON, **_kw})


def load(name: str | None, database=None, shrink: bool = True) -> None:
    """Load a profile; None picks gpu where a GPU is visible, smoke elsewhere. ``database``: a
    Hypothesis example database to use instead of the default (see fuzz/search/example_db.py).
    ``shrink=False``: a failure is reported as first found (the mutation self-check needs a kill, not a
    minimal case); the number of examples and their draws are the profile's."""
    global _active
    if name is None:
        from kernels.platform import detect

        name = "smoke" if detect().tier == "cpu" else "gpu"
    changes = {}
    if database is not None:
        changes["database"] = database
    if not shrink:
        changes["phases"] = [p for p in settings.get_profile(name).phases if p is not Phase.shrink]
    if changes:
        variant = name + "".join(f"-{key}" for key in sorted(changes))
        settings.register_profile(variant, settings.get_profile(name), **changes)
        settings.load_profile(variant)
    else:
        settings.load_profile(name)
    _active = name


@contextlib.contextmanager
def shape_caps_of(name: str):
    """Within the block, ``shape_caps()`` are profile ``name``'s (Hypothesis's settings are untouched):
    for tools that draw the suite's cases outside pytest (fuzz.bench.gpu_run)."""
    global _active
    previous, _active = _active, name
    try:
        yield SHAPE_CAPS[name]
    finally:
        _active = previous


def active() -> str:
    return _active


def shape_caps() -> dict:
    """The (max_m, max_n, max_k) caps of the active profile."""
    return SHAPE_CAPS[_active]


def production_caps() -> dict:
    """The active profile's production-K caps (max_m, max_n, max_k) and its shares in percent."""
    return PRODUCTION_CAPS[_active]


def max_examples() -> int:
    return PROFILES[_active]["max_examples"]
