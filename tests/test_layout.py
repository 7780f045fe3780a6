"""The package's layout, read from its source with ``ast``: folders are the stages of the
flow (the pipeline's stages, in order) and imports follow it.

Every import counts, function-level ones included: a lazy import still makes a circle
at run time. Only imports under ``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1] / "suite"

# stage -> the stages it may import (itself always). Order of the flow:
# core -> encodings, data -> specs -> modeling -> plan -> training -> evaluation -> execution,
# results beside them (records and rows need only core), report reads results only
# (and the data stage's task descriptions), bench and submission use earlier stages and results (submission's
# replicate also reads the boards' headlines from report), cli anything.
EARLY = {"core", "encodings", "data", "specs", "modeling", "plan"}
ALLOWED = {
    "core": set(),
    "encodings": {"core"},
    "data": {"core"},
    "specs": {"core", "encodings", "data"},
    "modeling": {"core", "encodings", "specs"},
    "plan": {"core", "encodings", "data", "specs", "modeling"},
    "results": {"core"},
    "training": EARLY,
    "evaluation": EARLY | {"training", "results"},
    "execution": EARLY | {"training", "evaluation", "results"},
    "report": {"core", "data", "results"},
    "bench": EARLY | {"training", "results"},  # it writes its record with the results stage's checked writer
    "submission": EARLY | {"training", "evaluation", "results", "execution", "report"},
}
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SUITE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"  # the package root holds only RECIPE_VERSION


MODULES = {module_name(p): p for p in sorted(SUITE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_only(tree: ast.Module) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def imports_of(module: str) -> set[str]:
    """The suite modules ``module`` imports, wherever in it the import statement is."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped = _type_checking_only(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name) if name.split(".")[0] == "suite" else None
            if target and target != module:
                found.add(target)
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def upward_imports() -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in GRAPH.items() for t in targets
                  if stage_of(m) != "cli" and stage_of(t) != stage_of(m)
                  and stage_of(t) not in ALLOWED[stage_of(m)])


def circles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    return found


def test_every_folder_is_a_known_stage():
    assert {stage_of(m) for m in MODULES} <= set(ALLOWED) | {"cli"}


def test_no_stage_imports_a_later_one():
    assert upward_imports() == []


def test_no_import_circle():
    assert circles() == []


def test_the_checks_see_a_circle_and_an_upward_import():
    """The checks above can fail: an upward import and a circle added to the graph are found."""
    GRAPH["suite.core.registry"].add("suite.plan.grid")
    try:
        assert "suite.core.registry -> suite.plan.grid" in upward_imports()
        assert any("suite.core.registry" in c and "suite.plan.grid" in c for c in circles())
    finally:
        GRAPH["suite.core.registry"].discard("suite.plan.grid")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_small(module):
    assert len(MODULES[module].read_text().splitlines()) <= MAX_LINES


def _constructions(pattern: str) -> set[str]:
    return {m for m, p in MODULES.items() if re.search(pattern, p.read_text())}


def test_one_model_builder():
    """``Transformer(`` is constructed in the one builder only (suite.modeling.build)."""
    assert _constructions(r"(?<![\w.])(?<!class )Transformer\(") == {"suite.modeling.build"}


def test_one_trainer_factory():
    assert _constructions(r"\bL\.Trainer\(|\blightning\.Trainer\(|(?<![\w.])Trainer\(") == {"suite.training.trainer"}


def _registered_kinds() -> set[str]:
    from suite.data.batteries import BATTERIES
    from suite.data.corpus import CORPUS_SOURCES
    from suite.plan.task_kinds import TASK_KINDS
    from suite.report.board_kinds import BOARD_KINDS

    return {name for registry in (TASK_KINDS, CORPUS_SOURCES, BATTERIES, BOARD_KINDS) for name in registry.names()}


def test_no_branch_on_a_kind_string():
    """Task, corpus, battery and board kinds are registry keys, looked up once: no module or
    template compares a value with one of their names."""
    names = "|".join(sorted(_registered_kinds()))
    pattern = re.compile(rf"""(kind|battery)["'\]]*\s*(==|!=|in)\s*[(\[{{]?["']({names})["']"""
                         rf"""|["']({names})["']\s*[!=]=\s*\w*(kind|battery)|kind["'],\s*["']equalto["'],\s*["']({names})["']""")
    files = sorted(SUITE.rglob("*.py")) + sorted(SUITE.rglob("*.html"))
    found = [f"{p.relative_to(SUITE.parent)}:{i}" for p in files
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
