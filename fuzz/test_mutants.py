"""Mutation self-check (``pytest fuzz --mutants``): each shipped mutant of kernels/ (fuzz/selfcheck/mutants.py)
is applied to a copy of the repository and the fuzz suite is run against it; the suite must fail,
for every mutant. Without --mutants these tests skip. Each mutant is one test, so pytest-xdist
(``-n K``) runs K mutants at once; the kill table (conftest) is built from the tests' reports."""
import pytest

from fuzz.selfcheck.mutants import MUTANTS, run_mutant
from kernels.platform import detect


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_killed(mutant, request):
    if not request.config.getoption("--mutants"):
        pytest.skip("the mutation self-check runs with --mutants")
    equivalent = mutant.equivalence(detect().tier)
    if equivalent:
        pytest.skip(f"mutant {mutant.name}: {equivalent}")
    result = run_mutant(mutant, "smoke")  # the kill must not need more than the pre-submission profile
    request.node.user_properties.append(("mutant_result", dict(result.__dict__)))  # to the kill table
    assert result.killed, f"mutant {mutant.name} ({mutant.bug_class}) survived: {result.killed_by}\n{result.card}"
