"""A module of "the submission's own" code for provenance tests: ``body`` written to ``tmp_path/own_sub.py`` and
imported, so its frames are the file's own (a module beside the submission path counts as the file's)."""
from __future__ import annotations

import importlib.util
import textwrap


def own_module(tmp_path, body: str, name: str):
    """(the imported module, its path as a string)."""
    path = tmp_path / "own_sub.py"
    path.write_text(textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)
