"""The paths under test: each of our kernels/ paths as a subject (kernel_subjects), the cases each one is fuzzed
with and one run judged (fuzzing), and the corpus of failing cases replayed first on every run."""
