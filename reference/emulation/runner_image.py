"""The top-level modules a submission can import on the runner, and the package that provides each.

The runner's image is built from gpu-mode/kernelbot ``docker/amd-docker.Dockerfile`` at commit 8127da265e88
(2026-03-04, the MI355X image: ROCm 7.1, torch 2.10.0+rocm7.1, aiter f3be04a12a0c). Its Python packages
come from four lines of it:

- ``pip install torch==2.10.0+rocm7.1``: torch, and what its wheel requires (pytorch-triton-rocm gives
  ``triton``);
- ``git checkout f3be04a12a0c && pip install -r requirements.txt``: aiter's requirements.txt at that commit
  (pandas, pytest, psutil, matplotlib, pyyaml, einops, pybind11>=3.0.1, ninja,
  flydsl==0.0.1.dev95158637), with the packages they require;
- ``python3 setup.py develop`` in that checkout: its ``packages=["aiter_meta", "aiter"]``;
- ``pip install ninja numpy packaging wheel``, and apt's python3-pip, python3-setuptools, python3-wheel.

flydsl's wheel of that time (ROCm/FlyDSL ``setup.py``: ``_mlir`` is staged from its build beside
``flydsl``) installs two top-level packages, ``flydsl`` and ``_mlir``, the MLIR bindings FlyDSL kernels
import as ``from _mlir import ir`` (aiter's own ``aiter/ops/flydsl/kernels/*.py`` do at f3be04a12a0c).

Only top-level names: which submodules a version has is the package's business. The standard library is
left out (both machines have it).
"""
from __future__ import annotations

DOCKERFILE = "gpu-mode/kernelbot docker/amd-docker.Dockerfile @ 8127da265e88"
TORCH_LINE = "pip install torch==2.10.0+rocm7.1"
AITER_REQUIREMENTS = "aiter f3be04a12a0c requirements.txt (pip install -r requirements.txt)"
AITER_DEVELOP = "aiter f3be04a12a0c setup.py develop (packages=['aiter_meta', 'aiter'])"
LAST_PIP_LINE = "pip install ninja numpy packaging wheel"
APT_LINE = "apt-get install python3-pip python3-setuptools python3-wheel"

# module -> (the package that provides it, where the fact comes from)
MODULES = {
    "torch": ("torch", TORCH_LINE),
    "torchgen": ("torch", TORCH_LINE + " (in the torch wheel)"),
    "functorch": ("torch", TORCH_LINE + " (in the torch wheel)"),
    "triton": ("pytorch-triton-rocm", TORCH_LINE + " (required by the ROCm torch wheel)"),
    "filelock": ("filelock", TORCH_LINE + " (required by torch)"),
    "typing_extensions": ("typing-extensions", TORCH_LINE + " (required by torch)"),
    "sympy": ("sympy", TORCH_LINE + " (required by torch)"),
    "mpmath": ("mpmath", TORCH_LINE + " (required by sympy)"),
    "networkx": ("networkx", TORCH_LINE + " (required by torch)"),
    "jinja2": ("jinja2", TORCH_LINE + " (required by torch)"),
    "markupsafe": ("markupsafe", TORCH_LINE + " (required by jinja2)"),
    "fsspec": ("fsspec", TORCH_LINE + " (required by torch)"),
    "flydsl": ("flydsl", AITER_REQUIREMENTS + ": flydsl==0.0.1.dev95158637"),
    "_mlir": ("flydsl", AITER_REQUIREMENTS + ": flydsl==0.0.1.dev95158637 (its embedded MLIR bindings)"),
    "pandas": ("pandas", AITER_REQUIREMENTS),
    "dateutil": ("python-dateutil", AITER_REQUIREMENTS + " (required by pandas and matplotlib)"),
    "six": ("six", AITER_REQUIREMENTS + " (required by python-dateutil)"),
    "pytz": ("pytz", AITER_REQUIREMENTS + " (required by pandas)"),
    "tzdata": ("tzdata", AITER_REQUIREMENTS + " (required by pandas)"),
    "pytest": ("pytest", AITER_REQUIREMENTS),
    "_pytest": ("pytest", AITER_REQUIREMENTS),
    "pluggy": ("pluggy", AITER_REQUIREMENTS + " (required by pytest)"),
    "iniconfig": ("iniconfig", AITER_REQUIREMENTS + " (required by pytest)"),
    "pygments": ("pygments", AITER_REQUIREMENTS + " (required by pytest)"),
    "psutil": ("psutil", AITER_REQUIREMENTS),
    "matplotlib": ("matplotlib", AITER_REQUIREMENTS),
    "mpl_toolkits": ("matplotlib", AITER_REQUIREMENTS),
    "pylab": ("matplotlib", AITER_REQUIREMENTS),
    "contourpy": ("contourpy", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "cycler": ("cycler", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "fontTools": ("fonttools", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "kiwisolver": ("kiwisolver", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "PIL": ("pillow", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "pyparsing": ("pyparsing", AITER_REQUIREMENTS + " (required by matplotlib)"),
    "yaml": ("pyyaml", AITER_REQUIREMENTS),
    "einops": ("einops", AITER_REQUIREMENTS),
    "pybind11": ("pybind11", AITER_REQUIREMENTS),
    "ninja": ("ninja", AITER_REQUIREMENTS + "; " + LAST_PIP_LINE),
    "aiter": ("aiter", AITER_DEVELOP),
    "aiter_meta": ("aiter", AITER_DEVELOP),
    "numpy": ("numpy", LAST_PIP_LINE),
    "packaging": ("packaging", LAST_PIP_LINE),
    "wheel": ("wheel", LAST_PIP_LINE + "; " + APT_LINE),
    "pip": ("pip", APT_LINE),
    "setuptools": ("setuptools", APT_LINE),
    "pkg_resources": ("setuptools", APT_LINE),
    "_distutils_hack": ("setuptools", APT_LINE),
}


def runner_has(module: str) -> str | None:
    """The package that gives the runner the top-level module of ``module`` (``_mlir.ir`` -> flydsl), or
    None when the runner's image has no such package."""
    found = MODULES.get(module.partition(".")[0])
    return found[0] if found else None

