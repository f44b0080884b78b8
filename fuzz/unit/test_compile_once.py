"""One compile per kernel across a run's processes (fuzz.host.compile_caches.compile_once): a second
compile of the same source waits for the first and then finds its cache entry; other sources go on."""
from __future__ import annotations

import threading
import time

import triton
import triton.compiler

from fuzz.host import compile_caches


class Source:
    def __init__(self, key):
        self.key = key

    def hash(self):
        return self.key


def test_the_same_source_compiles_one_at_a_time_and_others_alongside(tmp_path, monkeypatch):
    spans, cache = {}, set()

    def stock(src, target=None, options=None):
        started = time.perf_counter()
        if src.key not in cache:  # the cache lookup a real compile makes first
            time.sleep(0.3)
            cache.add(src.key)
        spans.setdefault(src.key, []).append((started, time.perf_counter()))
        return f"kernel {src.key}"

    monkeypatch.setattr(triton.compiler, "compile", stock)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # not setattr: its undo would pin the knob for good
    assert compile_caches.compile_once({"TRITON_CACHE_DIR": str(tmp_path)})
    assert compile_caches.compile_once({"TRITON_CACHE_DIR": str(tmp_path)})  # idempotent: wrapped once
    wrapped = triton.compiler.compile
    assert wrapped.__wrapped__ is stock
    results = []
    threads = [threading.Thread(target=lambda key=key: results.append(wrapped(Source(key), options={})))
               for key in ("a", "a", "b")]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (a1, a2), (b,) = sorted(spans["a"]), spans["b"]
    assert a2[0] >= a1[1]  # the second "a" waited for the first, then hit its entry
    assert a2[1] - a2[0] < 0.1
    assert b[0] < a1[1] and b[1] - started < 0.55  # "b" compiled beside the first "a"
    assert sorted(results) == ["kernel a", "kernel a", "kernel b"]
    assert (tmp_path / compile_caches.LOCKS / "a.lock").exists()


def test_a_lock_that_cannot_be_had_never_fails_the_compile(tmp_path, monkeypatch):
    """The cache folder can vanish under a run (Triton prunes folders it finds empty; a patch points the cache
    elsewhere mid-run): on the H100 host an open() of the lock raised FileNotFoundError inside the file's call,
    which read as the file's FAIL (stop 50). Now the compile goes on without the lock."""
    monkeypatch.setattr(triton.compiler, "compile", lambda src, **kw: f"kernel {src.key}")
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(blocked))
    compile_caches.compile_once({"TRITON_CACHE_DIR": str(tmp_path)})
    assert triton.compiler.compile(Source("c"), options={}) == "kernel c"
