"""What a submission must hold: every run of a published grid with the encoding in it.

A reviewer publishes a submission's records beside the published rows, and a board compares its
rows seed by seed over the same recipe: a row of one 100-step smoke run (grids/smoke.yaml) would
sit beside rows of ten 600-step seeds as if it were one of them. So ``posbench submit NAME``
refuses, before it writes anything, unless the project's records hold a done piece of NAME for
every size, task and seed of the standard grid: the very runs that grid plans for NAME (the
grid expanded with NAME as its only encoding, as ``posbench run`` plans it), compared by run id,
so a run on another recipe or another corpus (its data fingerprint) is not one of them. For an
encoding that trains as itself its training runs; for a training-free variant (``trains_as``)
its evaluations of that grid's checkpoints. The standard grid is ``grids/quick.yaml``, the published
CPU default the submit how-to runs (docs/how-to/submit.md); ``--grid`` names another grid, one
the published snapshot holds (leaderboard/SNAPSHOT.json's ``grids``).
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

from suite.core.yamldoc import SpecErrors
from suite.plan.grid import expand
from suite.execution.tuned import sweep_chooser
from suite.specs import EncodingSpec, Grid, Project, load_encoding, load_grid, load_trained_as

STANDARD = "quick"


class NotStandard(Exception):
    """What keeps the records from being a submission, in one line."""


def published_grids(project: Project) -> list[str]:
    """The grids the project's published snapshot holds ([] without one)."""
    from suite.results.snapshot_files import read_info

    try:
        return list(read_info(project.root / "leaderboard")["grids"])
    except FileNotFoundError:
        return []


def check_standard(project: Project, name: str, runs: list, evals: list, grid_name: str = STANDARD) -> None:
    """Raise NotStandard naming the cells of the standard grid that ``runs`` (the done training
    records of ``name``) or ``evals`` (its done evaluation records) lack: a cell is held by the
    record of the run the grid plans for it (by run id: recipe, corpus fingerprint and all)."""
    if grid_name != STANDARD and grid_name not in published_grids(project):
        raise NotStandard(f"'{grid_name}' is not a published grid: a submission runs grids/{STANDARD}.yaml or one of "
                          f"the grids of leaderboard/SNAPSHOT.json ({', '.join(published_grids(project)) or 'none'})")
    path = project.root / "grids" / f"{grid_name}.yaml"
    try:
        grid = load_grid(path, project)
    except SpecErrors as exc:
        raise NotStandard(f"cannot load the standard grid {Path('grids', path.name)}: {exc.errors[0]}") from None
    try:
        encoding = load_encoding(project.root / "encodings" / f"{name}.yaml")
        trained_as = {name: load_trained_as(encoding, project)} if encoding.trains_as else {}
    except SpecErrors as exc:
        raise NotStandard(f"cannot load the encoding {name}: {exc.errors[0]}") from None
    planned = _planned_runs(project, grid, encoding, trained_as)
    wanted = {}
    for seed, size, task in itertools.product(grid.spec.seeds, grid.sizes, grid.tasks):
        size = grid.task_sizes.get(task.name, size)
        wanted.setdefault((size.name, task.name, seed), planned.get((size.name, task.name, seed)))
    if trained_as:  # its evaluations, of the checkpoints it evaluates
        have = {r.run_id for r in evals if r.encoding == name}
    else:
        have = {r.run_id for r in runs}
    missing = [cell for cell, run_id in wanted.items() if run_id is None or run_id not in have]
    if missing:
        pieces = "evaluations" if trained_as else "training runs"
        raise NotStandard(
            f"{name} lacks {len(missing)} of the {len(wanted)} {pieces} of the standard grid {Path('grids', path.name)} "
            f"({_cells(missing)}): run `posbench run grids/{path.name} --with-published` with {name} among its "
            "encodings, then submit")


def _planned_runs(project: Project, grid: Grid, encoding: EncodingSpec,
                  trained_as: dict[str, EncodingSpec]) -> dict[tuple[str, str, int], str]:
    """(size, task, seed) -> the id of the run ``grid`` plans there for ``encoding`` alone (its
    checkpoint's, for a variant): the grid expanded with it as its only encoding, a tuned grid's
    groups at the rate their sweeps' records in ``project`` chose (a group still sweeping has none)."""
    spec = grid.spec.model_copy(update={"encodings": [encoding.name], "extensions": []})
    alone = dataclasses.replace(grid, spec=spec, encodings=(encoding,), trained_as=trained_as, extended=())
    try:
        plan = expand(alone, tuned=sweep_chooser(project))
    except (OSError, ValueError) as exc:  # a corpus that cannot be read: no run id to compare with
        raise NotStandard(f"cannot plan the standard grid {Path('grids', grid.path.name)} for {encoding.name}: {exc}") from None
    evaluated = {e.run.run_id for e in plan.evaluations}  # a tuned grid's: not its sweep runs at the other rates
    return {(run.size.name, run.task.name, run.seed): run.run_id for run in plan.runs
            if run.parent is None and (grid.spec.tuning is None or run.run_id in evaluated)}


def _cells(cells: list[tuple[str, str, int]]) -> str:
    """``tiny/lm/seed1-9, tiny/flip_flop/seed0-9``: each size and task with its seeds as ranges."""
    seeds: dict[tuple[str, str], list[int]] = {}
    for size, task, seed in cells:
        seeds.setdefault((size, task), []).append(seed)
    return ", ".join(f"{size}/{task}/seed{_ranges(sorted(s))}" for (size, task), s in seeds.items())


def _ranges(values: list[int]) -> str:
    out, start = [], None
    for i, v in enumerate(values):
        start = v if start is None else start
        if i + 1 == len(values) or values[i + 1] != v + 1:
            out.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ",".join(out)
