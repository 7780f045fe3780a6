"""The checks of a loaded grid that need the registries (run by `validate`, `plan` and `run`
before anything trains): evaluators and their settings, training-free variants, extensions
whose child must fit its parent's checkpoint, and evaluation spans."""

from __future__ import annotations

import itertools

from suite.plan.evaluators import EVALUATORS
from suite.plan.task_kinds import kind_of
from suite.specs import EncodingSpec, Grid, SizeSpec



def load_checked_grid(path, project) -> Grid:
    """The grid at ``path`` loaded and checked, every problem of both stages raised at once as
    SpecErrors: the registries' checks run on what of the grid loads (suite.specs.grid.load_grid_partly),
    so an unknown evaluator is reported beside a bad learning rate, not after it is fixed."""
    from suite.core.yamldoc import SpecErrors
    from suite.specs.grid import load_grid_partly

    grid, errors = load_grid_partly(path, project)
    if grid is not None:
        errors += [e for e in check_grid(grid) if e not in errors]
    if errors:
        raise SpecErrors(errors)
    return grid


def check_grid(grid: Grid) -> list:
    """Problems of a loaded grid that its spec types cannot see, as file:line errors
    (the limits that would otherwise fail only once training starts: suite.plan.limits)."""
    from suite.plan.limits import check_limits
    from suite.core.yamldoc import read_yaml

    doc = read_yaml(grid.path)
    return (_check_evaluations(grid, doc) + _check_trains_as(grid) + _check_extensions(grid, doc) + _check_span(grid, doc)
            + check_limits(grid, doc))


def _check_evaluations(grid: Grid, doc) -> list:
    import pydantic

    from suite.core.registry import did_you_mean

    errors = []
    for i, entry in enumerate(grid.spec.evaluations):
        try:
            evaluator = EVALUATORS.get(entry.evaluator)
        except (KeyError, TypeError):
            names = EVALUATORS.names()
            errors.append(doc.error(("evaluations", i, "evaluator"), f"unknown evaluator '{entry.evaluator}'"
                                    f"{did_you_mean(entry.evaluator, names)}; known: {', '.join(names)}"))
            continue
        try:
            evaluator.Settings.model_validate(entry.settings)
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                message = "unknown setting" + did_you_mean(err["loc"][-1], evaluator.Settings.model_fields) \
                    if err["type"] == "extra_forbidden" else err["msg"]
                errors.append(doc.error(("evaluations", i, "settings", *err["loc"]), message))
    return errors


def _check_trains_as(grid: Grid) -> list:
    """A variant evaluates another spec's checkpoint: its weights must load into the
    variant's model as they are (same parameters and buffers, same shapes)."""
    from suite.core.yamldoc import read_yaml
    from suite.plan.limits import sizes_of

    errors = []
    for encoding in grid.encodings:
        base = grid.trained_as.get(encoding.name)
        if base is None:
            continue
        for size, recipe in dict.fromkeys((size, kind_of(t).train_recipe(grid.spec, t))
                                          for t in grid.tasks for _, size in sizes_of(grid, t)):
            misfit = _checkpoint_misfit(base, encoding, size, recipe.seq_len)
            if misfit:
                errors.append(read_yaml(encoding.source).error(("trains_as",), misfit))
                break
    return errors


def _check_extensions(grid: Grid, doc) -> list:
    """A child starts from its parent's weights: the parent's state must load into the
    child's model as it is (DroPE's NoPE child of RoPE does; a learned table does not
    grow to a longer length)."""
    errors = []
    for i, (entry, encodings) in enumerate(zip(grid.spec.extensions, grid.extended)):
        parent = next((e for e in grid.encodings if e.name == entry.parent), None)
        if parent is None:
            continue  # reported when the grid was loaded
        for (j, encoding), size in itertools.product(enumerate(encodings), grid.sizes):
            misfit = _checkpoint_misfit(parent, encoding, size, grid.spec.train.seq_len)
            if misfit:
                errors.append(doc.error(("extensions", i, "encodings", j), misfit))
        if entry.steps == 0:
            for j, encoding in enumerate(encodings):
                if _calibrates(encoding) is False:
                    errors.append(doc.error(("extensions", i, "steps"), (
                        f"0 steps (search only) would leave '{entry.encodings[j]}' as its parent's weights: only an encoding "
                        f"that calibrates on them (LongRoPE's search) may take 0 steps; evaluate it training-free instead")))
    return errors


def _calibrates(encoding: EncodingSpec) -> bool | None:
    """Whether the encoding searches something on its parent's weights (suite.training.calibration);
    None when its implementation cannot be imported here (external code, as `validate` without --import)."""
    try:
        implementation, params = encoding.implementation(), encoding.resolved_params()
    except Exception:
        return None
    return bool(getattr(implementation, "calibrates", False)) and implementation.searches(params)


def _checkpoint_misfit(trained: EncodingSpec, encoding: EncodingSpec, size: SizeSpec, seq_len: int) -> str | None:
    """Why ``trained``'s checkpoint does not load into a model with ``encoding`` at this size,
    or None: it fits, or the shapes cannot be known here (external code not imported, as
    `validate` without --import; dims an encoding refuses, which check_limits reports)."""
    from suite.encodings import ModelDims

    dims = ModelDims(size.d_model, size.n_heads, size.d_model // size.n_heads, size.n_layers, seq_len)
    try:
        mine, theirs = (_state_shapes(e, dims) for e in (encoding, trained))
    except Exception:
        return None
    if mine == theirs:
        return None
    return (f"the '{trained.name}' checkpoint does not fit {encoding.name}'s encoding at size '{size.name}': "
            f"state {sorted(theirs.items())} vs {sorted(mine.items())}")


def _state_shapes(encoding: EncodingSpec, dims) -> dict:
    import torch

    impl = encoding.implementation()
    with torch.device("meta"):  # shapes only: nothing is allocated
        module = impl(encoding.resolved_params(), dims)
    # searched on the parent's weights (LongRoPE) or added at their initial values (DroPE's QK-norm): not loaded
    own = (*getattr(impl, "calibrated_state", ()), *getattr(impl, "added_state", ()))
    state = {k: tuple(v.shape) for k, v in module.state_dict().items() if k not in own}
    # whether the encoding is one module per layer matters only to the weights that are loaded
    return {"per_layer": impl.per_layer, **state} if state else {}


def _check_span(grid: Grid, doc) -> list:
    """Every scale scores the same bytes only when a ``tokens`` budget holds whole windows
    of every eval length (the extrapolation evaluators take their span that way)."""
    errors = []
    for task in grid.tasks:
        kind = kind_of(task)
        longest = max({1, *grid.spec.scales}) * kind.train_recipe(grid.spec, task).seq_len
        budgets = {r.settings["tokens"] for r in kind.evaluations(task, grid.spec) if "tokens" in r.settings}
        for tokens in sorted(b for b in budgets if b % longest):
            errors.append(doc.error(("eval", "tokens"), f"{tokens} is not a multiple of the longest eval length "
                                                        f"{longest} (max scale x seq_len): scales would score different spans"))
        passages = grid.spec.eval.passages
        if kind.reads_corpus and passages is not None and grid.spec.eval.tokens % (passages * longest):
            errors.append(doc.error(("eval", "passages"), f"{passages} passages of tokens {grid.spec.eval.tokens} are not "
                                                          f"whole windows of the longest eval length {longest}: tokens must "
                                                          f"be a multiple of passages x {longest}"))
    return errors
