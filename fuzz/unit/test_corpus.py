"""fuzz.subjects.corpus and fuzz.judge.cards: round trips, stable order, and strict loading (each corrupt file names
itself and the bad field)."""
import json

import pytest
import torch

from fuzz.judge.attribution import Finding
from fuzz.judge.cards import FailureCard
from fuzz.subjects.corpus import CorpusError, iter_corpus, load, save
from fuzz.judge.verdicts import check_product, official_reference, official_verdict
from fuzz.search.strategies import Case
from reference import exact_gemm_from_inputs

CASE = Case(8, 192, 320, "transposed", "ties", "one_hot", -3, 5, ((1, 2, "nan"), (0, 0, "-0")), "random", 77)


class NamedSubject:
    name = "fused_triton"
    last_dispatch = {"path": "triton_fused", "config": "BM16_BN64_BK256", "splits": 1}


def failing_card(corpus_file="") -> FailureCard:
    data, _ = Case(4, 64, 320, seed=1).build()
    exact = exact_gemm_from_inputs(data)
    y = official_reference(exact).clone()
    y.view(-1).view(torch.int16)[0] += 1
    return FailureCard.from_verdicts(
        CASE, NamedSubject(), "cpu", check_product(y, data, exact=exact),
        official_verdict(y, official_reference(exact)),
        [Finding("rows_columns", "1 of 256 elements wrong: rows 0; columns 0")], corpus_file,
    )


def test_case_and_card_round_trip_through_a_file(tmp_path):
    card = failing_card("fuzz/corpus/x.json")
    path = save(CASE, card, directory=tmp_path)
    assert path.name == f"{CASE.id()}.json"
    entry = load(path)
    assert entry.case == CASE and entry.card == card
    assert save(CASE, card, directory=tmp_path) == path and len(list(tmp_path.iterdir())) == 1


def test_card_renders_what_a_user_needs(tmp_path):
    text = failing_card("fuzz/corpus/abc.json").render()
    assert "FAIL product: subject fused_triton, path triton_fused, tier cpu" in text
    assert "M=8 N=192 K=320 layout=transposed A=ties*2^-3 B=one_hot*2^5" in text
    assert "nan@(1,2)" in text and "scale_pad=random seed=77" in text
    assert "official  passes" in text and "would not catch this" in text
    assert "why       1 of 256 elements wrong" in text
    assert "replay    python -m pytest fuzz --replay fuzz/corpus/abc.json" in text
    assert "worst     (0, 0)" in text


def test_iter_corpus_yields_every_case_in_file_name_order(tmp_path):
    cases = [Case(m, 64, 64, seed=s) for m in (1, 2, 3) for s in (0, 1)]
    for case in reversed(cases):
        save(case, directory=tmp_path)
    (tmp_path / "README.md").write_text("not a case")
    got = list(iter_corpus(tmp_path))
    assert sorted(got, key=Case.id) == got and set(got) == set(cases)
    assert list(iter_corpus(tmp_path)) == got


def set_case(key, value):
    return lambda obj: obj["case"].__setitem__(key, value)


CORRUPTIONS = {
    "not json": ("<file>", None),
    "top level is a list": ("<file>", lambda obj: [obj]),
    "format missing": ("format", lambda obj: obj.pop("format")),
    "format 2": ("format", lambda obj: obj.__setitem__("format", 2)),
    "unknown top-level key": ("extra", lambda obj: obj.__setitem__("extra", 1)),
    "m as a string": ("case.m", set_case("m", "8")),
    "m as a bool": ("case.m", set_case("m", True)),
    "m as a float": ("case.m", set_case("m", 8.0)),
    "m zero": ("case.m", set_case("m", 0)),
    "n not a multiple of 16": ("case.n", set_case("n", 200)),
    "k not a multiple of 32": ("case.k", set_case("k", 330)),
    "unknown layout": ("case.layout", set_case("layout", "diagonal")),
    "unknown regime": ("case.a_regime", set_case("a_regime", "gaussian")),
    "exponent out of range": ("case.b_exponent", set_case("b_exponent", 500)),
    "special row out of range": ("case.specials[0].row", set_case("specials", [[8, 0, "nan"]])),
    "special column out of range": ("case.specials[0].col", set_case("specials", [[0, 320, "nan"]])),
    "signalling nan special": ("case.specials[0].kind", set_case("specials", [[0, 0, "snan"]])),
    "special without kind": ("case.specials[0]", set_case("specials", [[0, 0]])),
    "pad fill too big": ("case.scale_pad_fill", set_case("scale_pad_fill", 256)),
    "negative seed": ("case.seed", set_case("seed", -1)),
    "case field missing": ("case.seed", lambda obj: obj["case"].pop("seed")),
    "unknown case field": ("case.dtype", set_case("dtype", "bf16")),
    "hand-edited case": ("case", set_case("seed", 78)),
    "card tier not a string": ("card.tier", lambda obj: obj["card"].__setitem__("tier", 3)),
    "card repeats the case": ("card.case", lambda obj: obj["card"].__setitem__("case", obj["case"])),
    "card not an object": ("card", lambda obj: obj.__setitem__("card", "broken")),
    "card attribution not strings": ("card.attribution", lambda obj: obj["card"].__setitem__("attribution", [1])),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupt_file_names_itself_and_the_field(tmp_path, corruption):
    field, mutate = CORRUPTIONS[corruption]
    path = save(CASE, failing_card(), directory=tmp_path)
    if mutate is None:
        path.write_text(path.read_text()[:-20])
    else:
        obj = json.loads(path.read_text())
        replaced = mutate(obj)
        path.write_text(json.dumps(replaced if isinstance(replaced, list) else obj))
    with pytest.raises(CorpusError) as error:
        load(path)
    assert error.value.field == field and error.value.file == path
    assert str(path) in str(error.value) and repr(field) in str(error.value)


def test_a_duplicated_key_is_rejected(tmp_path):
    path = save(CASE, directory=tmp_path)
    path.write_text(path.read_text().replace('"m": 8,', '"m": 8, "m": 9,'))
    with pytest.raises(CorpusError) as error:
        load(path)
    assert error.value.field == "m"


def test_iter_corpus_stops_at_the_first_invalid_file(tmp_path):
    save(Case(1, 64, 64), directory=tmp_path)
    (tmp_path / "0000000000000000.json").write_text("{}")
    with pytest.raises(CorpusError, match="0000000000000000.json"):
        list(iter_corpus(tmp_path))


def test_a_card_without_a_case_round_trips_and_renders():
    card = FailureCard(case=None, subject="submission.py", path="", tier="cpu", check="import", summary="SyntaxError")
    assert FailureCard.from_json(json.loads(json.dumps(card.to_json()))) == card
    assert card.render() == "FAIL import: subject submission.py, tier cpu\n  verdict   SyntaxError"
