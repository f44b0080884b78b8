"""A subject this tier cannot run is a skip in the tests that use it, with the reason (the library raises
``SubjectUnavailable`` and leaves pytest to the tests)."""
import pytest

from fuzz.subjects.fuzzing import SubjectUnavailable, available_subject


def available_or_skip(name):
    """The subject called ``name``, or a skip saying why this tier cannot run it."""
    try:
        return available_subject(name)
    except SubjectUnavailable as unavailable:
        pytest.skip(str(unavailable))
