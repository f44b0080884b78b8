"""fuzz.search.value_streams: the counter stream's primitives have the ranges and distributions the regimes rely
on, its draws are independent of each other, and the mt19937 stream is torch's generator unchanged."""
import pytest
import torch

from fuzz.search.value_streams import (QUANTILE_STEPS, CounterStream, Mt19937Stream, default_stream, make_stream,
                                normal_quantiles)


def test_randint_covers_its_range_uniformly_and_nothing_else():
    x = CounterStream(1).randint(-3, 4, (70_000,))
    counts = torch.bincount(x + 3, minlength=7)
    assert x.min() == -3 and x.max() == 3 and counts.sum() == 70_000
    assert (counts - 10_000).abs().max() < 500  # ~5 sigma of a binomial(70000, 1/7)
    wide = CounterStream(2).randint(0, 1 << 31, (1000,))
    assert wide.min() >= 0 and wide.max() < 1 << 31 and wide.max() > 1 << 30


def test_rand_is_in_the_unit_interval_on_a_2_to_the_minus_32_grid():
    u = CounterStream(3).rand((100_000,))
    assert u.dtype == torch.float64 and 0 <= u.min() and u.max() < 1
    assert torch.equal(u * 2.0**32, torch.floor(u * 2.0**32))
    assert abs(u.mean().item() - 0.5) < 0.005


def test_randn_has_a_normals_moments_and_a_bounded_tail():
    z = CounterStream(4).randn((400_000,))
    assert abs(z.mean().item()) < 0.01 and abs(z.std().item() - 1) < 0.01
    assert abs((z.abs() < 1).double().mean().item() - 0.6827) < 0.005
    table = normal_quantiles("cpu")
    assert table.shape == (QUANTILE_STEPS + 1,) and z.abs().max() <= table[-1] < 4.4
    assert torch.equal(table, table.float().double())  # fp32 values: a libm's last bit cannot move them
    assert CounterStream(4).randn((10,), dtype=torch.float32).dtype == torch.float32


def test_randperm_is_a_permutation():
    stream = CounterStream(5)
    perms = [stream.randperm(8) for _ in range(50)]
    assert all(torch.equal(p.sort().values, torch.arange(8)) for p in perms)
    assert len({tuple(p.tolist()) for p in perms}) > 40


def test_draws_are_fresh_and_a_seed_replays():
    stream = CounterStream(6)
    first, second = stream.words((4096,)), stream.words((4096,))
    assert not torch.equal(first, second) and len(first.unique()) == 4096
    assert torch.equal(CounterStream(6).words((4096,)), first)
    assert not torch.equal(CounterStream(7).words((4096,)), first)
    # Neighbouring elements and draws are not correlated (a plain counter would be).
    a, b = first.double(), second.double()
    assert abs(torch.corrcoef(torch.stack([a, b]))[0, 1]) < 0.05
    assert abs(torch.corrcoef(torch.stack([a[:-1], a[1:]]))[0, 1]) < 0.05


def test_the_mt19937_stream_is_torchs_generator_called_as_before():
    gen = torch.Generator().manual_seed(9)
    stream = Mt19937Stream(9)
    assert torch.equal(stream.randint(0, 16, (5, 7)), torch.randint(0, 16, (5, 7), generator=gen))
    assert torch.equal(stream.rand((9,)), torch.rand((9,), generator=gen, dtype=torch.float64))
    assert torch.equal(stream.randn((9,), dtype=torch.float32), torch.randn((9,), generator=gen, dtype=torch.float32))
    assert torch.equal(stream.randperm(8), torch.randperm(8, generator=gen))


def test_streams_are_named_and_chosen_by_device():
    assert isinstance(make_stream("mt19937", 1), Mt19937Stream)
    assert isinstance(make_stream("counter", 1, "cpu"), CounterStream)
    with pytest.raises(ValueError, match="stream must be one of"):
        make_stream("philox", 1)
    assert default_stream("cpu") == "mt19937" and default_stream("cuda") == "counter"
    with pytest.raises(ValueError, match="randint needs"):
        CounterStream(1).randint(0, 1 << 32, (2,))


def test_the_suites_cases_draw_from_the_tiers_stream():
    from hypothesis import Phase, find, settings

    from fuzz.subjects import fuzzing

    subject = fuzzing.SUBJECTS["fused"]
    case = find(fuzzing.subject_cases(subject), lambda c: c.m > 1,
                settings=settings(database=None, max_examples=50, phases=[Phase.generate]))
    assert case.stream == default_stream(fuzzing.TIER.device)
