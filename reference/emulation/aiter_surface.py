"""The names each emulated aiter module has in real aiter, written into the emulation's surface list.

    python -m reference.emulation.aiter_surface /path/to/aiter-checkout    # at the runner's commit

``from aiter.ops.gemm_op_a4w4 import get_GEMM_config`` against an emulated module that lacks the name
raises a plain ImportError, read as the file's broken import, although the runner's aiter has it. The
``[module_names]`` section of ``aiter_emu/aiter/surface_<commit>.txt`` lists, for every module the
emulation has, the top-level names of the same module in real aiter (functions, classes, assignments,
imports): names only, read with ``ast`` from the checkout, no aiter code. ``_not_emulated.py`` reads it
and provenance makes such an import NOT RUN ("uses an aiter API the emulation does not have"); a name
real aiter never had stays the file's error, as on the runner.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

EMULATION = Path(__file__).resolve().parent / "aiter_emu"
SECTION = "[module_names]"


def emulated_modules() -> list[str]:
    """Dotted names of the modules the emulation has (its own helpers, ``aiter._*``, left out)."""
    names = []
    for path in sorted((EMULATION / "aiter").rglob("*.py")):
        parts = path.relative_to(EMULATION).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not parts[-1].startswith("_") or parts[-1] in ("_triton_kernels", "_vectorized", "_triton"):
            names.append(".".join(parts))
    return names


def top_level_names(source: str) -> set[str]:
    """The names a module binds at its top level (what ``from module import name`` can find)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    return names


def module_source(checkout: Path, module: str) -> str | None:
    base = checkout.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    return None


def section_lines(checkout: Path) -> list[str]:
    lines = []
    for module in emulated_modules():
        source = module_source(checkout, module)
        if source is not None:
            lines += [f"{module}:{name}" for name in sorted(top_level_names(source))]
    return lines


def rewrite(surface: Path, lines: list[str]) -> None:
    """The surface file with its [module_names] section replaced by ``lines`` (added when absent)."""
    text = surface.read_text(encoding="utf-8")
    head = text.split(f"\n{SECTION}\n")[0].rstrip("\n")
    note = ("# module:name, real aiter's top-level names of each module the emulation has "
            "(reference/emulation/aiter_surface.py)")
    surface.write_text(head + f"\n{SECTION}\n{note}\n" + "\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not (Path(argv[0]) / "aiter" / "__init__.py").is_file():
        print("usage: python -m reference.emulation.aiter_surface AITER_CHECKOUT (holding aiter/__init__.py)")
        return 2
    surfaces = sorted((EMULATION / "aiter").glob("surface_*.txt"))
    lines = section_lines(Path(argv[0]))
    rewrite(surfaces[0], lines)
    print(f"{surfaces[0]}: {len(lines)} module names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
