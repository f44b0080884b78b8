"""Imports point one way: the oracle <- the platform emulation <- our kernels <- the suite.

| layer    | files                          | may import of ours                                        |
|----------|--------------------------------|-----------------------------------------------------------|
| oracle   | ``reference/*.py``             | the oracle only; no Triton either (pure PyTorch)          |
| platform | ``reference/emulation/**``     | the oracle's helpers and the platform; never ``kernels``  |
| kernels  | ``kernels/**``                 | the oracle, the platform, aiter; never ``fuzz``           |
| suite    | ``fuzz/**``                    | everything                                                |

A subject and its judge must not share code: if the emulated aiter imported ``kernels``, a bug in our
quantizer would also change the aiter that a user's submission is judged against. Read from the source
(AST), so nothing is imported: ``import x``, ``from x import y`` (``y`` may be a module), relative imports
resolved against the file's package, and ``importlib.import_module("x")`` / ``__import__("x")`` with a
literal name, at any depth (inside functions too).

One more rule keeps the platform from needing ``kernels`` for the Triton mode: a platform module that
imports Triton at module level calls ``triton_interpreter.activate()`` first (Triton fixes interpreted or
compiled when it is imported and when a kernel is decorated).

Inside the suite, floors (``SUITE_FLOORS``, lowest first): a module of ``fuzz/`` imports its own floor and
those above it in this table, never one below it, so each floor reads without the ones after it.

| floor      | files                | what it is                                                      |
|------------|----------------------|-----------------------------------------------------------------|
| host       | ``fuzz/host/``       | how checks share a machine (workers, threads, caches)           |
| codegen    | ``fuzz/codegen/``    | gfx950 code generation of our kernels and of HIP                |
| search     | ``fuzz/search/``     | how cases are made: strategies, value streams, profiles         |
| judge      | ``fuzz/judge/``      | how an output is judged: the verdict ladder, attribution, cards |
| report     | ``fuzz/report/``     | the HTML report: error maps and coverage as SVG and PNG         |
| subjects   | ``fuzz/subjects/``   | the paths under test, each fuzzed and judged; the corpus        |
| selfcheck  | ``fuzz/selfcheck/``  | checks of the suite itself (mutants, the NaN table)             |
| submission | ``fuzz/submission/`` | the submission mode (``mxfp4-fuzz check``)                      |
| bench      | ``fuzz/bench/``      | benchmarks                                                      |
| cli        | ``fuzz/cli.py``      | the ``mxfp4-fuzz`` command                                      |
| testing    | ``fuzz/testing/``    | what the tests share: fixtures, the explicit plan, probes       |

Tests (``test_*.py``, ``conftest.py``, everything in ``fuzz/unit/`` and ``fuzz/conformance/``) stand above
every floor; a floor importing one of them points up too. A folder of ``fuzz/`` without a floor fails
until it is given one.
"""
import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

from fuzz.selfcheck.mutants import MUTANTS, mutated_repo

REPO = pathlib.Path(__file__).resolve().parents[2]

# layer -> prefixes of our dotted module names it must not import ("kernels" also forbids "kernels.x")
FORBIDDEN = {
    "oracle": ("reference.emulation", "kernels", "fuzz", "aiter", "triton"),
    "platform": ("kernels", "fuzz"),
    "kernels": ("fuzz",),
    "suite": (),
}


def layer_of(relative: pathlib.PurePosixPath) -> str | None:
    parts = relative.parts
    if parts[0] == "reference":
        return "platform" if len(parts) > 2 and parts[1] == "emulation" else "oracle"
    return {"kernels": "kernels", "fuzz": "suite"}.get(parts[0])


def _module_name(relative: pathlib.PurePosixPath) -> list[str]:
    parts = list(relative.with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _resolve(relative: pathlib.PurePosixPath, node: ast.ImportFrom) -> str:
    """The absolute dotted name a ``from`` import names (relative ones resolved from the repo root)."""
    if not node.level:
        return node.module or ""
    package = _module_name(relative)
    if relative.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(relative: pathlib.PurePosixPath, source: str):
    """(line, dotted name) for every import in ``source``; ``from m import a`` yields m and m.a."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(relative, node)
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                yield node.lineno, node.args[0].value


def _names_prefix(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _activation_before_triton(tree: ast.Module) -> bool:
    """At module level, ``...activate()`` comes before the first ``import triton...``/``from triton...``
    (or there is no module-level Triton import)."""
    for statement in tree.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "activate":
                return True
        names = ([a.name for a in statement.names] if isinstance(statement, ast.Import)
                 else [statement.module or ""] if isinstance(statement, ast.ImportFrom) and not statement.level
                 else [])
        if any(_names_prefix(n, "triton") for n in names):
            return False
    return True


# Floors inside fuzz/, lowest first (the folder, or the module at fuzz/'s root, that names each).
SUITE_FLOORS = ("host", "codegen", "search", "judge", "report", "subjects", "selfcheck", "submission", "bench", "cli",
                "testing")
TEST_FOLDERS = ("unit", "conformance")  # tests only: above every floor
UNFLOORED = ("examples",)  # submission files, not modules of ours


def suite_floor(piece: str) -> int | None:
    """The floor of the suite's top-level piece ``piece`` (``fuzz.<piece>``): its index in SUITE_FLOORS, one
    above them all for tests, None for what has no floor (``fuzz/__init__.py``, the examples, a name that is
    not ours)."""
    if piece in SUITE_FLOORS:
        return SUITE_FLOORS.index(piece)
    if piece in TEST_FOLDERS or is_test_module(piece):
        return len(SUITE_FLOORS)
    return None


def suite_floor_violations(root: pathlib.Path) -> list[str]:
    """Every import inside ``fuzz/`` that points up a floor, as ``path:line: floor imports name``, and every
    product module of ``fuzz/`` outside the floors."""
    found = []
    for path in sorted((root / "fuzz").rglob("*.py")):
        relative = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        parts = relative.with_suffix("").parts
        piece = parts[1]  # the folder, or the module at fuzz/'s root
        if piece in UNFLOORED or piece == "__init__" or is_test_module(parts[-1]):
            continue
        floor = suite_floor(piece)
        if floor is None:
            found.append(f"{relative}: fuzz/{piece} has no floor (give it one in SUITE_FLOORS, "
                         "fuzz/unit/test_layering.py)")
            continue
        if floor == len(SUITE_FLOORS):
            continue  # a test folder: may import every floor
        reported = set()
        for line, name in imported_names(relative, path.read_text()):
            dotted = name.split(".")
            if dotted[0] != "fuzz" or len(dotted) < 2:
                continue
            target = suite_floor(dotted[1])
            if target is not None and target > floor and (line, dotted[1]) not in reported:
                reported.add((line, dotted[1]))
                above = "the tests" if target == len(SUITE_FLOORS) else f"the {dotted[1]} floor"
                found.append(f"{relative}:{line}: the {piece} floor imports {name} ({above} is above it)")
    return found


def layering_violations(root: pathlib.Path) -> list[str]:
    """Every import under ``root`` that points the wrong way, as ``path:line: layer imports name``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        layer = layer_of(relative)
        if layer is None:
            continue
        source = path.read_text()
        reported = set()  # (line, forbidden prefix): `from kernels.x import a, b` is one violation
        for line, name in imported_names(relative, source):
            bad = [p for p in FORBIDDEN[layer] if _names_prefix(name, p)]
            if bad and (line, bad[0]) not in reported:
                reported.add((line, bad[0]))
                found.append(f"{relative}:{line}: {layer} module imports {name} (the {layer} layer must not "
                             f"import {bad[0]})")
        if layer == "platform" and not _activation_before_triton(ast.parse(source)):
            found.append(f"{relative}: imports Triton before calling triton_interpreter.activate() (the Triton "
                         "mode must be fixed by the platform itself, not by importing kernels)")
    return found


# Not our modules: submission files (they import task.py and each other as the runner's harness does).
NOT_PRODUCT = ("fuzz/examples/",)
# The emulated aiter keeps aiter's own package layout (user code imports those paths), and aiter's
# modules import the package they are in: circles there are aiter's, not a layering of ours.
CIRCLES_ALLOWED_UNDER = ("reference.emulation.aiter_emu.",)


def is_test_module(dotted: str) -> bool:
    leaf = dotted.rsplit(".", 1)[-1]
    return leaf.startswith("test_") or leaf == "conftest"


def our_modules(root: pathlib.Path) -> dict:
    """dotted name -> relative path of every module of ours under ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        relative = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        if layer_of(relative) is None or str(relative).startswith(NOT_PRODUCT):
            continue
        modules[".".join(_module_name(relative))] = relative
    return modules


def import_graph(root: pathlib.Path) -> dict:
    """module -> {(line, module of ours it imports)}, at any depth (inside functions too)."""
    modules = our_modules(root)
    graph = {}
    for name, relative in modules.items():
        edges = set()
        for line, imported in imported_names(relative, (root / relative).read_text()):
            if imported in modules and imported != name:
                edges.add((line, imported))
        graph[name] = edges
    return graph


def imports_of_test_modules(root: pathlib.Path) -> list[str]:
    """Product modules importing a test module: what other code uses must live in a library module."""
    found = []
    for name, edges in import_graph(root).items():
        if is_test_module(name):
            continue
        for line, imported in sorted(edges):
            if is_test_module(imported):
                found.append(f"{our_modules(root)[name]}:{line}: {name} imports the test module {imported}")
    return found


def import_circles(root: pathlib.Path) -> list[list[str]]:
    """Groups of our modules that import one another in a circle (strongly connected, two or more)."""
    graph = {name: {m for _, m in edges} for name, edges in import_graph(root).items()}
    index, low, stack, on_stack, circles, counter = {}, {}, [], set(), [], [0]

    def visit(node):  # Tarjan's algorithm
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 and not all(m.startswith(CIRCLES_ALLOWED_UNDER) for m in group):
                circles.append(sorted(group))

    import sys as _sys

    limit = _sys.getrecursionlimit()
    _sys.setrecursionlimit(max(limit, 10000))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        _sys.setrecursionlimit(limit)
    return sorted(circles)


def test_imports_point_one_way_oracle_platform_kernels_suite():
    assert layering_violations(REPO) == []


def test_floors_inside_the_suite_import_only_downward():
    assert suite_floor_violations(REPO) == []


def test_no_product_module_imports_a_test_module():
    assert imports_of_test_modules(REPO) == []


def test_no_import_circles():
    assert import_circles(REPO) == []


def test_the_checker_reads_this_repository():
    # guards against a checker that passes because it finds nothing
    emulation = REPO / "reference/emulation/aiter_emu/aiter/ops/triton/_triton_kernels/quant/quant.py"
    relative = pathlib.PurePosixPath(emulation.relative_to(REPO).as_posix())
    names = {name for _, name in imported_names(relative, emulation.read_text())}
    assert layer_of(relative) == "platform"
    assert "reference.emulation.triton_interpreter" in names and "triton.language" in names
    kernel_module = REPO / "kernels/fused.py"
    assert any(_names_prefix(n, "reference") for _, n in imported_names(
        pathlib.PurePosixPath("kernels/fused.py"), kernel_module.read_text()))
    # the floors: every folder of fuzz/ holding product modules is one of them, and real imports cross floors
    folders = {p.parent.name for p in (REPO / "fuzz").glob("*/*.py")} - set(TEST_FOLDERS) - set(UNFLOORED)
    assert folders <= set(SUITE_FLOORS), folders - set(SUITE_FLOORS)
    cli = pathlib.PurePosixPath("fuzz/cli.py")
    assert {suite_floor(n.split(".")[1]) for _, n in imported_names(cli, (REPO / cli).read_text())
            if n.startswith("fuzz.")} >= {SUITE_FLOORS.index("submission")}


def write_tree(root: pathlib.Path, files: dict) -> pathlib.Path:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


CLEAN_TREE = {
    "reference/__init__.py": "from reference.oracle.quant import quantize_mxfp4\n",
    "reference/oracle/quant.py": "import torch\n",
    "reference/emulation/__init__.py": "",
    "reference/emulation/triton_interpreter.py": "def activate():\n    return True\n",
    "reference/emulation/aiter_emu/aiter/ops/quant.py": """\
        from reference.emulation import triton_interpreter

        triton_interpreter.activate()

        import triton
        from reference.oracle.e2m1 import decode_e2m1
        from ..utility import dtypes
    """,
    "kernels/fused.py": "import aiter\nfrom reference.emulation import gfx950_asm\nfrom reference import quantize_mxfp4\n",
    "fuzz/test_x.py": "import kernels\nimport aiter\nfrom reference.emulation import select\n",
    "fuzz/search/strategies.py": "from reference.oracle.e2m1 import TIE_POINTS\nfrom fuzz.search import profiles\n",
    "fuzz/search/profiles.py": "",
    "fuzz/judge/verdicts.py": "from fuzz.search.strategies import Case\n",
    "fuzz/subjects/fuzzing.py": "from fuzz.judge import verdicts\nfrom ..search import strategies\n",
    "fuzz/cli.py": "def main():\n    from fuzz.submission import many\n",
    "fuzz/submission/many.py": "from fuzz.host import parallel\nfrom fuzz.report import page\n",
    "fuzz/testing/explicit_plan.py": "from fuzz.submission import many\n",
    "fuzz/unit/test_y.py": "from fuzz.testing import explicit_plan\nfrom fuzz.cli import main\n",
    "fuzz/unit/helpers_of_a_test.py": "from fuzz.testing import explicit_plan\n",
    "fuzz/examples/wrong_tail.py": "from task import input_t\n",
}

BACK_IMPORTS = {
    "emulation imports kernels": ("reference/emulation/aiter_emu/aiter/ops/triton/quant.py", "import kernels\n"),
    "emulation imports a kernels block": (
        "reference/emulation/aiter_emu/aiter/ops/triton/quant.py",
        "from kernels.triton_blocks import mxfp4_quant_portable\n"),
    "emulation imports kernels inside a function": (
        "reference/emulation/select.py", "def f():\n    from kernels import platform\n"),
    "emulation imports kernels by name": (
        "reference/emulation/select.py", "import importlib\nimportlib.import_module('kernels.fused')\n"),
    "emulation imports the suite": ("reference/emulation/cuda_on_cpu.py", "from fuzz import oracle\n"),
    "oracle imports the emulation": ("reference/oracle/gemm.py", "from reference import emulation\n"),
    "oracle imports the emulation relatively": ("reference/oracle/gemm.py", "from ..emulation import select\n"),
    "oracle imports triton": ("reference/oracle/e2m1.py", "import triton.language as tl\n"),
    "oracle imports kernels": ("reference/oracle/layouts.py", "from kernels.triton_blocks import unshuffle_b_tile\n"),
    "kernels import the suite": ("kernels/dispatch.py", "from fuzz.judge.verdicts import check_product\n"),
    "emulation imports triton before activating": (
        "reference/emulation/aiter_emu/aiter/ops/triton/gemm.py",
        "import triton\nfrom reference.emulation import triton_interpreter\ntriton_interpreter.activate()\n"),
}


def test_a_clean_tree_has_no_violations(tmp_path):
    assert layering_violations(write_tree(tmp_path, CLEAN_TREE)) == []
    assert suite_floor_violations(tmp_path) == []


def test_a_product_module_importing_a_test_module_is_caught(tmp_path):
    tree = write_tree(tmp_path, {**CLEAN_TREE, "fuzz/test_paths.py": "SUBJECTS = {}\n",
                                 "fuzz/selfcheck/nan_check.py": "def f():\n    from fuzz import test_paths\n"})
    assert imports_of_test_modules(tree) == [
        "fuzz/selfcheck/nan_check.py:2: fuzz.selfcheck.nan_check imports the test module fuzz.test_paths"]
    helper = write_tree(tmp_path / "ok", {**CLEAN_TREE, "fuzz/subjects/fuzzing.py": "SUBJECTS = {}\n",
                                          "fuzz/test_paths.py": "from fuzz.subjects.fuzzing import SUBJECTS\n"})
    assert imports_of_test_modules(helper) == []  # a test importing a library module is the rule


def test_an_import_circle_is_caught_even_through_a_function_level_import(tmp_path):
    tree = write_tree(tmp_path, {**CLEAN_TREE,
                                 "fuzz/submission/plugin.py": "def f():\n    from fuzz.submission.merge import M\n",
                                 "fuzz/submission/merge.py": "from fuzz.submission.plugin import EXIT\n"})
    assert import_circles(tree) == [["fuzz.submission.merge", "fuzz.submission.plugin"]]
    assert import_circles(write_tree(tmp_path / "clean", CLEAN_TREE)) == []


@pytest.mark.parametrize("case", BACK_IMPORTS, ids=list(BACK_IMPORTS))
def test_a_back_import_is_caught(tmp_path, case):
    relative, source = BACK_IMPORTS[case]
    violations = layering_violations(write_tree(tmp_path, {**CLEAN_TREE, relative: source}))
    assert len(violations) >= 1 and all(v.startswith(relative) for v in violations), violations


# Imports pointing up a floor inside fuzz/ (each the kind the floors were built to end).
BACK_UP_IMPORTS = {
    "search imports the judge": ("fuzz/search/strategies.py", "from fuzz.judge.verdicts import TIE_POINTS\n"),
    "search imports the report inside a function": (
        "fuzz/search/example_db.py", "def save_map():\n    from fuzz.report.png import write_map_png\n"),
    "search imports the judge relatively": ("fuzz/search/profiles.py", "from ..judge import cards\n"),
    "judge imports the subjects": ("fuzz/judge/verdicts.py", "from fuzz.subjects.kernel_subjects import Subject\n"),
    "judge imports the report by name": (
        "fuzz/judge/cards.py", "import importlib\nimportlib.import_module('fuzz.report.png')\n"),
    "the submission mode imports the command": ("fuzz/submission/many.py", "from fuzz.cli import main\n"),
    "a product module imports test support": ("fuzz/submission/plugin.py", "from fuzz.testing import explicit_plan\n"),
    "a product module imports a test folder": ("fuzz/host/parallel.py", "from fuzz.unit import test_y\n"),
    "a product module at fuzz's root without a floor": ("fuzz/subjects_old.py", "import torch\n"),
    "a folder without a floor": ("fuzz/paths/fuzzing.py", "from fuzz.judge import verdicts\n"),
}


@pytest.mark.parametrize("case", BACK_UP_IMPORTS, ids=list(BACK_UP_IMPORTS))
def test_a_back_up_import_inside_the_suite_is_caught(tmp_path, case):
    relative, source = BACK_UP_IMPORTS[case]
    root = write_tree(tmp_path, {**CLEAN_TREE, relative: source})
    violations = suite_floor_violations(root)
    assert len(violations) >= 1 and all(v.startswith(relative) for v in violations), violations
    assert layering_violations(root) == []  # the outer rule lets the suite import anything: only the floors catch it


# Run in a copy of the repository with a mutant of kernels/ applied: the emulated aiter's quantizer stays
# bit-exact with the oracle, imports nothing of kernels/, and the mutant is live in kernels/ all the while.
MUTANT_PROBE = """
import importlib, inspect, sys
import numpy as np, torch
from reference import quantize_mxfp4
from reference.emulation.select import load_emulation

load_emulation("aiter_emulated")
quant = importlib.import_module("aiter_emulated.ops.triton.quant")
device = "cuda" if torch.cuda.is_available() else "cpu"

# e2m1 ties and their bf16 neighbours at several scales (amax 4 * 2^s fixes the scale at s), plus amaxes
# across the mantissa range that decides between the even and floor scale rules
ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
rows = []
for s in (0, -3, 5, -120, 120, -125, -127):  # small ties are bf16 subnormals; -127: scale byte 0
    group = np.array([4.0, 6.0, 0.0, -0.0] + ties + [-t for t in ties] + ties + [0.5] * 7, dtype=np.float32)
    rows.append(group * np.float32(2.0 ** s))
for m in (1.0, 1.25, 1.5, 1.7, 1.74, 1.75, 1.8, 1.9, 1.99):
    rows.append(np.linspace(-m, m, 32, dtype=np.float32) * np.float32(8.0))
x = torch.tensor(np.stack(rows)).to(torch.bfloat16).reshape(8, 64)  # 16 groups

def emulated_matches_oracle():
    codes, scales = quant.dynamic_mxfp4_quant(x.to(device))
    want_codes, want_scales = quantize_mxfp4(x)
    return torch.equal(codes.cpu(), want_codes) and torch.equal(scales.cpu().contiguous(), want_scales)

assert emulated_matches_oracle(), "emulated quantizer differs from the oracle"
loaded = [m for m in sys.modules if m == "kernels" or m.startswith("kernels.")]
assert not loaded, f"the emulation imported {loaded}"

import kernels.triton_blocks
assert sys.argv[1] in inspect.getsource(kernels.triton_blocks), "kernels/ is not the mutated copy"
if device == "cpu":  # the interpreter: show the mutant changes what our quantizer computes
    from fuzz.testing.block_quantizer import quantize_with_block
    ours = quantize_with_block(x, gfx950=False)
    want = quantize_mxfp4(x)
    assert not (torch.equal(ours[0], want[0]) and torch.equal(ours[1], want[1])), "the mutant is not live"
assert emulated_matches_oracle(), "emulated quantizer differs from the oracle with kernels/ loaded"
print("independent")
"""


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.name in ("ties_up", "floor_scale")],
                         ids=lambda m: m.name)
def test_a_mutant_of_our_quantizer_leaves_the_emulated_aiter_exact(mutant, tmp_path):
    root = mutated_repo(mutant, tmp_path)
    run = subprocess.run([sys.executable, "-c", MUTANT_PROBE, mutant.new], cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "independent" in run.stdout, run.stdout[-2000:] + run.stderr[-4000:]
