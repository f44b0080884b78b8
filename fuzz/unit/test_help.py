"""A user reading `pytest --help` learns the suite: the option group renders (argparse formats help
strings with %, so one stray percent sign breaks the whole help)."""
import subprocess
import sys


def test_pytest_help_lists_the_suite_options():
    out = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    for option in ("--profile", "--aiter", "--submission", "--replay", "--mutants", "--codegen", "--faults",
                   "--example-db", "--bench-json"):
        assert option in out.stdout, option
