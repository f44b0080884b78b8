"""Fuzz a popcorn submission file: a worker subprocess runs it (worker, runner), checks judge it
(checks), a pytest plugin reports the verdicts (plugin); fuzz/test_submission.py holds the tests."""
