"""Ahead-of-time code-generation checks (no GPU needed): what the compiler makes of our kernels."""
