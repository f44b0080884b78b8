"""The failure corpus: one JSON file per failing case in ``fuzz/corpus/``, replayed on every run.

A file is ``{"format": 1, "case": {...Case fields...}, "card": {...FailureCard fields but case...} | null}``
named ``<case id>.json`` (a hash of the case, so saving the same failure twice writes one file).
Loading is strict: plain JSON only (no pickle, no eval), every field present with the right type and
range, no unknown or duplicated keys, and the file name must still match the content. Anything else
raises ``CorpusError`` naming the file and the field.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from fuzz.judge.cards import FailureCard
from fuzz.search.strategies import Case, FieldError

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
FORMAT_VERSION = 1
_KEYS = ("format", "case", "card")


class CorpusError(ValueError):
    """A corpus file is unreadable or invalid; ``file`` and ``field`` say where."""

    def __init__(self, file: Path, field: str, reason: str):
        super().__init__(f"{file}: field {field!r}: {reason}")
        self.file = Path(file)
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class CorpusEntry:
    path: Path
    case: Case
    card: FailureCard | None


def save(case: Case, card: FailureCard | None = None, directory: Path = CORPUS_DIR) -> Path:
    """Write ``case`` (and its card) to ``directory/<case id>.json`` atomically; returns the path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    card_json = None
    if card is not None:
        card_json = card.to_json()
        del card_json["case"]  # the file's case is the card's case
    text = json.dumps({"format": FORMAT_VERSION, "case": case.to_json(), "card": card_json}, indent=1, sort_keys=True)
    path = directory / f"{case.id()}.json"
    # Written beside its final name and renamed over it: processes saving at once (xdist workers) never
    # leave or read a half-written file, and the same case saved twice is one file (the same bytes).
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{case.id()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_map(case: Case, card: FailureCard | None, directory: Path = CORPUS_DIR) -> Path | None:
    """The card's error map as ``directory/<case id>.png`` (beside the case's JSON); None without a map."""
    if card is None or not card.error_map:
        return None
    from fuzz.report.png import write_map_png

    return write_map_png(card.error_map, Path(directory) / f"{case.id()}.png")


def _no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        raise _DuplicateKey(duplicated[0])
    return dict(pairs)


class _DuplicateKey(ValueError):
    pass


def load(path) -> CorpusEntry:
    """Read and validate one corpus file."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as e:
        raise CorpusError(path, str(e), "appears twice") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorpusError(path, "<file>", f"not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise CorpusError(path, "<file>", f"must hold a JSON object, got {type(obj).__name__}")
    for key in obj:
        if key not in _KEYS:
            raise CorpusError(path, key, "unknown field")
    for key in _KEYS:
        if key not in obj:
            raise CorpusError(path, key, "missing")
    if type(obj["format"]) is not int or obj["format"] != FORMAT_VERSION:
        raise CorpusError(path, "format", f"must be {FORMAT_VERSION}, got {obj['format']!r}")
    try:
        case = Case.from_json(obj["case"])
    except FieldError as e:
        raise CorpusError(path, "case" if e.field == "case" else f"case.{e.field}", e.reason) from None
    if path.stem != case.id():
        raise CorpusError(path, "case", f"content hash is {case.id()}, not the file name: the case was edited "
                          "(save it again with fuzz.subjects.corpus.save to get a file named after its content)")
    card_obj, card = obj["card"], None
    if card_obj is not None:
        if not isinstance(card_obj, dict):
            raise CorpusError(path, "card", f"must be an object or null, got {type(card_obj).__name__}")
        if "case" in card_obj:
            raise CorpusError(path, "card.case", "unknown field (the file's case is the card's case)")
        try:
            card = FailureCard.from_json({**card_obj, "case": obj["case"]})
        except FieldError as e:
            raise CorpusError(path, e.field, e.reason) from None
    return CorpusEntry(path, case, card)


def iter_corpus(directory: Path = CORPUS_DIR) -> Iterator[Case]:
    """Every case in ``directory`` (``*.json``), by file name; the first invalid file raises CorpusError."""
    for path in sorted(Path(directory).glob("*.json")):
        yield load(path).case
