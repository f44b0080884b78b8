"""The kernel paths under test. Importing the package first fixes the Triton mode (see platform)."""
from kernels import platform as platform  # noqa: F401  (must run before any @triton.jit)
