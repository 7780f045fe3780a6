"""Limits of a grid that its spec types cannot see: what would fail only once training
or evaluation has started, checked before anything starts (``validate``, ``plan``, ``run``).

* every encoding can be built at every size and training length of the grid (built on
  torch's ``meta`` device: shapes without memory), represents at least the training
  length (``max_length()``), and, when it rotates queries and keys (its ``rotate``
  hook), gets an even head dimension;
* a synthetic task fits its training length (its generator's ``min_length`` and the
  task's ``min_train_len``);
* a language-modelling corpus has files in every split, a training split longer than
  one window, and a test split that holds the longest evaluation window and the
  ``eval.tokens`` scored at every scale (sizes are read from the file system: nothing
  is loaded);
* a training run fits in memory, by a rough lower bound (see :func:`memory_needed`)
  against the larger of this machine's RAM and its GPU's memory.

External implementations are only inspected when imports are allowed; otherwise they
are listed by :func:`unchecked` and the caller says so.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from suite.core.registry import NotImported
from suite.specs import EncodingSpec, Grid, SizeSpec, TaskSpec, TrainRecipe
from suite.plan.task_kinds import kind_of
from suite.core.yamldoc import SpecError, YamlDoc

VOCAB = 256  # byte-level
FLOAT = 4  # bytes of a float32


def unchecked(encodings) -> list[str]:
    """Names of encodings whose external implementation was not imported (imports off)."""
    out = []
    for encoding in encodings:
        try:
            encoding.implementation()
        except NotImported:
            out.append(encoding.name)
        except (KeyError, TypeError):
            pass  # reported where the spec is loaded
    return out


def check_limits(grid: Grid, doc: YamlDoc) -> list[SpecError]:
    errors = []
    for i, task in enumerate(grid.tasks):
        recipe, field = recipe_of(grid, task)
        errors += kind_of(task).limits(grid, doc, i, task, recipe, field)
    pairs = {(recipe_of(grid, t), at) for t in grid.tasks for at in sizes_of(grid, t)}  # (recipe, field), (where, size)
    for (recipe, field), (where, size) in sorted(pairs, key=lambda pair: (pair[0][1], pair[1][0])):
        errors += _encoding_limits(grid, doc, recipe, field, where, size)
    return list(dict.fromkeys(errors))  # one report of a problem that several tasks share


def recipe_of(grid: Grid, task: TaskSpec) -> tuple[TrainRecipe, tuple[str, ...]]:
    """The training recipe of ``task``'s runs and the grid field it comes from (a key path:
    ``("train",)``, ``("task_train",)`` or ``("task_recipes", task)``)."""
    recipe = kind_of(task).train_recipe(grid.spec, task)
    if recipe is grid.spec.train:
        return recipe, ("train",)
    if recipe is grid.spec.task_train:
        return recipe, ("task_train",)
    return recipe, ("task_recipes", task.name)


def sizes_of(grid: Grid, task: TaskSpec) -> list[tuple[tuple, SizeSpec]]:
    """The sizes ``task`` trains at, each with the grid field it comes from: its recipe's
    ``size`` (``task_recipes.<task>.size``), else every entry of ``sizes``."""
    if task.name in grid.task_sizes:
        return [(("task_recipes", task.name, "size"), grid.task_sizes[task.name])]
    return [(("sizes", j), size) for j, size in enumerate(grid.sizes)]


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


# -- encodings at a size and a training length ----------------------------------------


@dataclass(frozen=True)
class Built:
    n_params: int
    hooks: frozenset
    max_length: int | None


@contextlib.contextmanager
def _no_weight_init():
    """torch.nn.init's functions as no-ops: shapes need no values, and initialising meta
    tensors goes through torch's reference implementations (seconds for a grid)."""
    import torch

    names = [n for n in vars(torch.nn.init) if n.endswith("_") and not n.startswith("_")]
    saved = {n: getattr(torch.nn.init, n) for n in names}
    try:
        for n in names:
            setattr(torch.nn.init, n, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for n, fn in saved.items():
            setattr(torch.nn.init, n, fn)


def build_on_meta(encoding: EncodingSpec, size: SizeSpec, train_len: int) -> Built:
    """The model of ``size`` with ``encoding`` on torch's meta device: its shapes, hooks and
    limits without allocating a byte (a 2^40-row table is refused, not allocated)."""
    import torch

    from suite.modeling.build import build_model, model_config

    with torch.device("meta"), _no_weight_init():
        model = build_model(encoding, model_config(size, train_len))
    first = model.encodings[0]
    return Built(model.num_params(), type(first).hooks(), first.max_length())


def _encoding_limits(grid: Grid, doc: YamlDoc, recipe: TrainRecipe, field: tuple[str, ...], where: tuple, size: SizeSpec) -> list[SpecError]:
    errors, largest = [], 0
    head_dim = size.d_model // size.n_heads
    at = f"size '{size.name}' and {dotted(field)}.seq_len {recipe.seq_len}"
    for i, encoding in enumerate(grid.encodings):
        base = grid.trained_as.get(encoding.name)
        for spec, role in [(encoding, "")] + ([(base, f" (trained as '{base.name}')")] if base else []):
            try:
                built = build_on_meta(spec, size, recipe.seq_len)
            except NotImported:
                continue
            except Exception as exc:  # an implementation's own check of its params against these dims
                errors.append(doc.error(("encodings", i), f"encoding '{spec.name}'{role} cannot be built at {at}: "
                                                          f"{type(exc).__name__}: {exc}"))
                continue
            largest = max(largest, built.n_params)
            if "rotate" in built.hooks and (head_dim < 2 or head_dim % 2):
                errors.append(doc.error(where, (
                    f"size '{size.name}': head dimension d_model / n_heads = {size.d_model} / {size.n_heads} = {head_dim} "
                    f"is {'odd' if head_dim % 2 else 'below 2'}; encoding '{spec.name}'{role} rotates pairs of "
                    "head dimensions and needs an even head dimension")))
            if role == "" and base is not None:
                continue  # a variant is only evaluated: a short table is 'not applicable' there, not an error
            if built.max_length is not None and built.max_length < recipe.seq_len:
                errors.append(doc.error(("encodings", i), (
                    f"encoding '{spec.name}'{role} represents {built.max_length} positions (max_length), fewer than "
                    f"the training length {dotted(field)}.seq_len {recipe.seq_len}")))
    if largest:
        errors += _memory_limit(grid, doc, recipe, field, where, size, largest)
    return errors


# -- memory -------------------------------------------------------------------------


def memory_needed(n_params: int, size: SizeSpec, recipe: TrainRecipe, eval_batch: int, eval_len: int) -> int:
    """A lower bound on the bytes a training run and its evaluation hold at once: float32
    weights, gradients and AdamW's two moments (16 bytes a parameter), plus the
    activations kept for the backward pass, at least (10 d_model + 2 d_ff) floats a token
    in every layer and 3 vocabulary rows a token for the logits, or the evaluation's
    (no gradients: one layer's worth) at the longest eval length, whichever is larger.
    Attention's T x T scores are left out: whether they are materialised depends on the
    device's attention kernel, and this bound must never refuse a run that fits."""
    per_token = size.n_layers * (10 * size.d_model + 2 * size.d_ff) + 3 * VOCAB
    train = recipe.batch_size * recipe.seq_len * per_token * FLOAT
    evaluate = eval_batch * eval_len * (4 * size.d_model + size.d_ff + VOCAB) * FLOAT
    return 16 * n_params + max(train, evaluate)


def machine_memory() -> int:
    """This machine's physical RAM, or its GPU's memory when that is larger (bytes)."""
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    import torch

    gpu = torch.cuda.get_device_properties(0).total_memory if torch.cuda.is_available() else 0
    return max(ram, gpu)


def _memory_limit(grid: Grid, doc: YamlDoc, recipe: TrainRecipe, field: tuple[str, ...], where: tuple, size: SizeSpec,
                  n_params: int) -> list[SpecError]:
    longest = max({1, *grid.spec.scales}) * recipe.seq_len
    stated = grid.spec.device_memory_gib
    need = memory_needed(n_params, size, recipe, grid.spec.eval.batch_size, longest)
    have = machine_memory() if stated is None else int(stated * 2**30)
    if need <= have:
        return []
    whose = "this machine's" if stated is None else "the grid's device_memory_gib,"
    return [doc.error(where, (
        f"size '{size.name}' at {dotted(field)}.batch_size {recipe.batch_size} x seq_len {recipe.seq_len} needs at least "
        f"{need / 2**30:.1f} GiB ({n_params:,} parameters x 16 bytes for weights, gradients and AdamW's moments, plus "
        f"activations; evaluation up to {longest} positions), more than {whose} {have / 2**30:.1f} GiB"))]

