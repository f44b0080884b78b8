"""What xdist workers share is safe when they write at once: many processes saving failures to one
corpus directory and one keyed Hypothesis example database leave valid files only (no torn JSON, no
duplicates, no temporary files), and every value saved and not deleted is there, intact."""
import multiprocessing
import os

from hypothesis.database import DirectoryBasedExampleDatabase

from fuzz.subjects.corpus import iter_corpus, load, save
from fuzz.search.strategies import Case

PROCESSES, ROUNDS = 8, 25
KEYS = (b"shared-key", b"other-key")


def shared_case(i: int) -> Case:
    return Case(4, 64, 320, seed=i % 5)  # every process saves these five: the same files, written at once


def own_case(worker: int, i: int) -> Case:
    return Case(8, 128, 256, seed=1000 * worker + i)


def value(worker: int, i: int) -> bytes:
    return (f"w{worker}-{i}-".encode() * 500)[: 4000 + i]  # several KiB: a torn write would show


def hammer(worker: int, corpus_dir: str, db_dir: str, barrier) -> None:
    db = DirectoryBasedExampleDatabase(db_dir)
    barrier.wait()  # all start together
    for i in range(ROUNDS):
        save(shared_case(i), directory=corpus_dir)
        save(own_case(worker, i), directory=corpus_dir)
        db.save(KEYS[0], value(worker, i))
        db.save(KEYS[0], b"same value from every process")
        if i % 5 == 4:  # shrinking moves and deletes examples while others save
            db.move(KEYS[0], KEYS[1], value(worker, i))
        if i % 7 == 6:
            db.delete(KEYS[0], value(worker, i - 1))
        list(db.fetch(KEYS[0]))


def test_many_processes_saving_at_once_leave_valid_files_only(tmp_path):
    corpus_dir, db_dir = tmp_path / "corpus", str(tmp_path / "db" / "k-key")
    context = multiprocessing.get_context("fork")  # the children only write JSON and bytes: no torch work
    barrier = context.Barrier(PROCESSES)
    workers = [context.Process(target=hammer, args=(w, str(corpus_dir), db_dir, barrier)) for w in range(PROCESSES)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0] * PROCESSES

    files = sorted(corpus_dir.iterdir())
    assert all(f.suffix == ".json" for f in files), [f.name for f in files if f.suffix != ".json"]
    expected = {shared_case(i).id() for i in range(ROUNDS)} | {
        own_case(w, i).id() for w in range(PROCESSES) for i in range(ROUNDS)}
    assert {f.stem for f in files} == expected  # one file per case: no duplicates, none lost
    assert len(list(iter_corpus(corpus_dir))) == len(expected)  # and each loads (strict: valid JSON, name = hash)
    assert all(load(f).case.id() == f.stem for f in files)

    db = DirectoryBasedExampleDatabase(db_dir)
    written = {value(w, i) for w in range(PROCESSES) for i in range(ROUNDS)} | {b"same value from every process"}
    for key in KEYS:
        fetched = list(db.fetch(key))
        assert len(fetched) == len(set(fetched))
        assert set(fetched) <= written, "a torn or foreign value in the database"
    moved = {value(w, i) for w in range(PROCESSES) for i in range(ROUNDS) if i % 5 == 4}
    assert set(db.fetch(KEYS[1])) == moved
    kept = {value(w, i) for w in range(PROCESSES) for i in range(ROUNDS)} - moved - {
        value(w, i - 1) for w in range(PROCESSES) for i in range(ROUNDS) if i % 7 == 6}
    assert kept | {b"same value from every process"} == set(db.fetch(KEYS[0]))
    leftovers = [name for _, _, names in os.walk(db_dir) for name in names if name.endswith(".tmp")]
    assert not leftovers
