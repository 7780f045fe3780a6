"""Shared by every spec kind: the pydantic base, error conversion, and the bounds on numbers."""

from __future__ import annotations

from typing import Annotated

import pydantic
from pydantic import BaseModel, ConfigDict

from pydantic_core import PydanticCustomError

from suite.core.boundary.names import name_problem
from suite.core.boundary.text import MAX_LABEL, text_problem

from suite.core.registry import did_you_mean
from suite.core.yamldoc import SpecError, YamlDoc


def _pydantic_errors(doc: YamlDoc, exc: pydantic.ValidationError, prefix: tuple = (), fields=None) -> list[SpecError]:
    out = []
    for err in exc.errors():
        loc = prefix + tuple(err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key" + did_you_mean(loc[-1], fields or [])
        elif err["type"] == "missing":
            message = "required key is missing"
        out.append(doc.error(loc, message))
    return out


def _validate(model: type[BaseModel], doc: YamlDoc, **context):
    """Build ``model`` from ``doc``; returns (object or None, errors)."""
    if doc.problems or not isinstance(doc.data, dict):
        return None, list(doc.problems)
    try:
        return model.model_validate({**doc.data, **context}), []
    except pydantic.ValidationError as exc:
        return None, _pydantic_errors(doc, exc, fields=model.model_fields)


def _name(value: str) -> str:
    if problem := name_problem(value):
        raise PydanticCustomError("name", problem)
    return value


def _label(value: str) -> str:
    if problem := text_problem(value, MAX_LABEL):
        raise PydanticCustomError("label", problem)
    return value


# What a spec's name may be (it names its file, pages and jobs) and what one line of text shown
# in a table may hold: the boundary's allow-lists (suite.core.boundary), for every spec kind.
SpecName = Annotated[str, pydantic.AfterValidator(_name)]
Label = Annotated[str, pydantic.AfterValidator(_label)]


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
