"""What the golden scripts share: reading a file of a reference repository at a pinned
commit, and running some of its top-level definitions as written.

Reference code often cannot be imported whole here (it imports a CUDA extension, a cloud
SDK, a training framework) while the functions the golden values need use none of that.
:func:`run_definitions` takes exactly those definitions from the file's source, unchanged,
and executes them in a namespace the script provides (torch, and stand-ins only where a
script says so in its docstring).
"""

from __future__ import annotations

import ast
import subprocess


def show(repo: str, commit: str, path: str) -> str:
    """The file ``path`` of the git directory ``repo`` at ``commit`` (``git show``)."""
    return subprocess.run(["git", f"--git-dir={repo}", "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def run_definitions(source: str, names: tuple[str, ...], namespace: dict, filename: str) -> dict:
    """Execute the top-level functions and classes ``names`` of ``source`` in ``namespace``
    (which it returns); every name must be found."""
    wanted = [n for n in ast.parse(source).body
              if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names]
    missing = set(names) - {n.name for n in wanted}
    assert not missing, f"{filename}: no top-level {sorted(missing)}"
    exec(compile(ast.Module(body=wanted, type_ignores=[]), filename, "exec"), namespace)
    return namespace
