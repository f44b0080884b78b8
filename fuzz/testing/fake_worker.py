"""Fake workers for the runner's tests: scripts that speak the worker's protocol (one JSON object per line,
requests in on ``--request-fd``, answers out on ``--response-fd``; runner.Worker starts them with
``command=(sys.executable, script)``), so a test chooses the order of answers, reports, crashes and hangs."""
from __future__ import annotations

import textwrap

# What every fake does first: its two pipes, as ``requests`` (read) and ``responses`` (written, flushed by the body)
PROLOGUE = textwrap.dedent("""
    import argparse, json, os, sys, time
    parser = argparse.ArgumentParser()
    parser.add_argument("--request-fd", type=int)
    parser.add_argument("--response-fd", type=int)
    args = parser.parse_args()
    requests = os.fdopen(args.request_fd, "r")
    responses = os.fdopen(args.response_fd, "w")
""")


def script(body: str) -> str:
    """A fake worker's source: the prologue, then ``body`` (dedented)."""
    return PROLOGUE + textwrap.dedent(body)
