"""What a submission must hold: every run of a published grid with the encoding in it.

A reviewer publishes a submission's records beside the published rows, and a board compares its
rows seed by seed over the same recipe: a row of one 100-step smoke run (grids/smoke.yaml) would
sit beside rows of ten 600-step seeds as if it were one of them. So ``posbench submit NAME``
refuses, before it writes anything, unless the project's records hold a done piece of NAME for
every size, task and seed of the standard grid, trained with that grid's recipe: for an encoding
that trains as itself its training runs; for a training-free variant (``trains_as``) its
evaluations of that grid's checkpoints. The standard grid is ``grids/quick.yaml``, the published
CPU default the submit how-to runs (docs/how-to/submit.md); ``--grid`` names another grid, one
the published snapshot holds (leaderboard/SNAPSHOT.json's ``grids``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from suite.core.yamldoc import SpecErrors
from suite.plan.grid import recipe_content, sized
from suite.plan.task_kinds import kind_of
from suite.specs import Project, TrainRecipe, load_encoding, load_grid

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
    records of ``name``) or ``evals`` (its done evaluation records) lack."""
    if grid_name != STANDARD and grid_name not in published_grids(project):
        raise NotStandard(f"'{grid_name}' is not a published grid: a submission runs grids/{STANDARD}.yaml or one of "
                          f"the grids of leaderboard/SNAPSHOT.json ({', '.join(published_grids(project)) or 'none'})")
    path = project.root / "grids" / f"{grid_name}.yaml"
    try:
        grid = load_grid(path, project)
        variant = load_encoding(project.root / "encodings" / f"{name}.yaml").trains_as is not None
    except SpecErrors as exc:
        raise NotStandard(f"cannot load the standard grid: {exc.errors[0]}") from None
    tuned = grid.spec.tuning is not None
    wanted = {}
    for seed, size, task in itertools.product(grid.spec.seeds, grid.sizes, grid.tasks):
        size = grid.task_sizes.get(task.name, size)
        recipe = sized(grid, kind_of(task).train_recipe(grid.spec, task), size)
        wanted.setdefault((size.name, task.name, seed), _recipe_key(recipe, tuned))
    if variant:  # its evaluations, of the checkpoints it evaluates
        have = {(r.size, r.task, r.seed, _recipe_key(TrainRecipe.model_validate(r.evaluation["run"]["train"]), tuned))
                for r in evals if r.encoding == name}
    else:
        have = {(r.size, r.task, r.seed, _recipe_key(TrainRecipe.model_validate(r.run["train"]), tuned)) for r in runs}
    missing = [cell for cell, recipe in wanted.items() if (*cell, recipe) not in have]
    if missing:
        pieces = "evaluations" if variant else "training runs"
        raise NotStandard(
            f"{name} lacks {len(missing)} of the {len(wanted)} {pieces} of the standard grid {Path('grids', path.name)} "
            f"({_cells(missing)}): run `posbench run grids/{path.name} --with-published` with {name} among its "
            "encodings, then submit")


def _recipe_key(recipe: TrainRecipe, tuned: bool) -> str:
    """A recipe as the comparison sees it: what enters a run's id; a tuned grid's learning rate is
    its sweep's choice, so there it is left out."""
    content = recipe_content(recipe)
    if tuned:
        content = {k: v for k, v in content.items() if k not in ("lr", "lr_sweep")}
    return repr(sorted(content.items()))


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
