"""Shared by every spec kind: the pydantic base, error conversion, and the bounds on numbers."""

from __future__ import annotations

import typing

import pydantic
from pydantic import BaseModel, ConfigDict

from suite.core.boundary.fields import Label, Name  # noqa: F401 (Label: re-exported to the spec kinds)
from suite.core.registry import did_you_mean
from suite.core.yamldoc import SpecError, YamlDoc


def _pydantic_errors(doc: YamlDoc, exc: pydantic.ValidationError, prefix: tuple = (), model=None) -> list[SpecError]:
    out = []
    for err in exc.errors():
        loc = prefix + tuple(err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key" + did_you_mean(loc[-1], fields_at(model, tuple(err["loc"])[:-1]))
        elif err["type"] == "missing":
            message = "required key is missing"
        out.append(doc.error(loc, message))
    return out


def _validate(model: type[BaseModel], doc: YamlDoc, **context):
    """Build ``model`` from ``doc``; returns (object or None, errors). The keys the reader found
    a problem in (a duplicate key, a NaN) are left out and the rest is validated too, so those
    problems do not hide the others."""
    if not isinstance(doc.data, dict):
        return None, list(doc.problems)
    errors, failed = list(doc.problems), failed_keys(doc.problems)
    try:
        spec = model.model_validate({**{k: v for k, v in doc.data.items() if k not in failed}, **context})
    except pydantic.ValidationError as exc:
        return None, errors + [e for e in _pydantic_errors(doc, exc, model=model) if e.field.split(".")[0] not in failed]
    return (None, errors) if errors else (spec, [])


def failed_keys(errors: list[SpecError]) -> set[str]:
    """The top-level keys ``errors`` are about."""
    return {e.field.split(".")[0] for e in errors}


def _salvage(model: type[BaseModel], doc: YamlDoc, errors: list[SpecError], **context):
    """``model`` built from ``doc`` without the values ``errors`` are about, or None when it
    cannot be: what lets the checks that need a built spec run on the rest of a document that
    did not validate, so that every mistake of a file is reported in one run, not one stage per
    run. Only the values in error go (a key of a mapping, an item of a list: never a whole
    section, whose other values the later checks read); a key that goes takes its default."""
    import copy

    if not isinstance(doc.data, dict):
        return None
    data = copy.deepcopy(doc.data)
    paths = [_loc_of(e.field) for e in errors]
    for _ in range(3):  # dropping a value may leave its section short of a required one: drop that too
        # a list's later items first, so that dropping one leaves the others' indices as they were
        for loc in sorted(set(paths), key=lambda loc: [(isinstance(p, str), p) for p in loc], reverse=True):
            if not loc or not _drop(data, loc):
                return None
        try:
            return model.model_validate({**data, **context})
        except pydantic.ValidationError as exc:
            paths = [tuple(err["loc"]) for err in exc.errors()]
    return None


def _loc_of(field: str) -> tuple:
    """A SpecError's field as a key path: ``"seeds.1"`` -> ``("seeds", 1)``; () for ``(file)``."""
    if field.startswith("("):
        return ()
    return tuple(int(p) if p.isdigit() else p for p in field.split("."))


def _drop(data, loc: tuple) -> bool:
    """Remove the value at ``loc`` from nested dicts and lists (the deepest part of it that
    exists); False when nothing at the top of ``loc`` exists."""
    parents, node = [], data
    for part in loc:
        present = part in node if isinstance(node, dict) else \
            isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node)
        if not present:
            break
        parents.append((node, part))
        node = node[part]
    if not parents:
        return False
    container, part = parents[-1]
    del container[part]
    return True


def fields_at(model, loc: tuple) -> list[str]:
    """The keys the spec model nested at ``loc`` knows (``("train",)``: TrainRecipe's), so that a
    typo at any depth gets its did-you-mean (``train.warmup_step``: 'warmup_steps'); [] where
    ``loc`` leads to no model (a free mapping such as an encoding's ``params``)."""
    for part in loc:
        if isinstance(part, int) or model is None:
            continue  # a list item: the list's model is already the item's
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return list(model.model_fields) if model is not None else []


def _model_in(annotation):
    """The spec model inside an annotation (``TrainRecipe | None``, ``list[ExtensionSpec]``), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# What a spec's name may be (it names its file, pages and jobs) and what one line of text shown
# in a table may hold: the boundary's allow-lists (suite.core.boundary.fields), for every spec kind.
SpecName = Name


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# Bounds of sizes: generous for any real run, small enough that an absurd value is a
# spec error instead of an allocation that takes the machine down.
MAX_SEEDS = 1000  # seeds of one grid: enough for any power analysis; 10,000 made plan take 41 s
MAX_SEED = 2**32 - 1  # what Lightning's seed_everything accepts (beyond it, it silently draws a random seed)
MAX_WIDTH = 1 << 16  # d_model, d_ff
MAX_LAYERS = 1024
MAX_LENGTH = 1 << 22  # seq_len, eval lengths, GLUE max_len
MAX_STEPS = 10_000_000
MAX_BATCH = 1 << 16
MAX_SCALE = 1024
MAX_TOKENS = 1 << 34  # tokens scored, corpus bytes
