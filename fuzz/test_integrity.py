"""Harness-integrity properties of every kernels/ subject: what the official harness cannot see
because it checks one call on fresh inputs.

- output aliasing: a second call must not overwrite the tensor the first call returned;
- stale state: new values written in place into the same input tensors must be used;
- inputs are never written (inputs holding every bf16 class, Inf and NaN included, in A and in B);
- determinism: the same input twice gives bitwise the same output.
"""
import dataclasses

import pytest
import torch
from hypothesis import given, settings, strategies as st

from fuzz.judge import verdicts
from fuzz.judge.verdicts import accumulation_model
from fuzz.search import profiles, strategies
from fuzz.subjects.fuzzing import TIER, subject_shapes
from fuzz.testing.subjects import available_or_skip

# The subjects that hold state across calls: the dispatcher (what gets submitted: failure memo,
# history), the ASM path (quantized-A cache) and a split-K path (workspaces). The stateless paths
# are covered through the dispatcher.
STATEFUL = ("dispatch", "asm", "fused_splitk_native_fold")
FEW = settings(max_examples=max(2, profiles.max_examples() // 4))


@pytest.fixture(params=STATEFUL, scope="module")
def subject(request):
    return available_or_skip(request.param)


@st.composite
def two_cases(draw, subject):
    """Two randn cases of one shape (different seeds): the second call's inputs."""
    m, n, k = draw(subject_shapes(subject))
    seed = draw(st.integers(0, 2**16))
    return strategies.Case(m, n, k, seed=seed), strategies.Case(m, n, k, seed=seed + 1)


def built_pair(data, subject):
    first_case, second_case = data.draw(two_cases(subject), label="cases")
    return first_case.build(TIER.device)[0], second_case.build(TIER.device)[0]


def adversarial(case, data):
    """The case with every bf16 class (largest normals, far above 60000, subnormals, +-0, +-Inf, NaN) in
    A and in B (so in the weights' bytes too), and a drawn fill of the scale padding: any in-place clamp,
    NaN scrub, normalisation or cast of an input changes some byte."""
    pad = data.draw(st.sampled_from(strategies.PAD_FILLS), label="scale padding")
    return dataclasses.replace(case, a_regime="every_class", b_regime="every_class", scale_pad_fill=pad)


def judge(subject, y, info, data):
    cpu = tuple(t.cpu() for t in data)
    v = verdicts.check_product(y, cpu, splits=info.splits, rounding=info.rounding, **accumulation_model())
    assert v.passed, f"{subject.name}: {v.summary}"


def snapshot(data):
    return [t.view(torch.uint8).clone() if t.element_size() == 1 else t.clone() for t in data]


@FEW
@given(data=st.data())
def test_outputs_are_not_aliased_and_inputs_not_written(subject, data):
    first_case, second_case = data.draw(two_cases(subject), label="cases")
    first, second = adversarial(first_case, data).build(TIER.device)[0], second_case.build(TIER.device)[0]
    before = snapshot(first)
    y1, _ = subject.run(first)
    kept = y1.clone()
    subject.run(second)
    assert torch.equal(y1.view(torch.int16), kept.view(torch.int16)), (
        f"{subject.name}: the second call overwrote the tensor returned by the first (aliased output)")
    after = snapshot(first)
    for name, b, a in zip(("A", "B", "B_q", "B_shuffle", "B_scale_sh"), before, after):
        assert torch.equal(b.view(torch.uint8), a.view(torch.uint8)), f"{subject.name} wrote into input {name}"


@FEW
@given(data=st.data())
def test_new_values_in_the_same_tensors_are_used(subject, data):
    inputs, fresh = built_pair(data, subject)
    subject.run(inputs)
    for t, new in zip(inputs, fresh):  # same objects, same addresses, new contents
        t.view(torch.uint8).copy_(new.view(torch.uint8)) if t.element_size() == 1 else t.copy_(new)
    y, info = subject.run(inputs)
    judge(subject, y, info, inputs)


@FEW
@given(data=st.data())
def test_same_input_gives_bitwise_the_same_output(subject, data):
    case, _ = data.draw(two_cases(subject), label="cases")
    inputs, _ = case.build(TIER.device)
    y1, _ = subject.run(inputs)
    y2, _ = subject.run(tuple(t.clone() for t in inputs))
    assert torch.equal(y1.view(torch.int16), y2.view(torch.int16)), f"{subject.name} is not deterministic"
