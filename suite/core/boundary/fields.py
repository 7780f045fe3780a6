"""The boundary's allow-lists as pydantic field types, for every model that reads a value from
outside (a spec, SNAPSHOT.json): a name (:mod:`.names`) and one line of text (:mod:`.text`),
each refused with the boundary's own message."""

from __future__ import annotations

from typing import Annotated

import pydantic
from pydantic_core import PydanticCustomError

from suite.core.boundary.names import name_problem
from suite.core.boundary.text import MAX_LABEL, text_problem


def _name(value: str) -> str:
    if problem := name_problem(value):
        raise PydanticCustomError("name", problem)
    return value


def _label(value: str) -> str:
    if problem := text_problem(value, MAX_LABEL):
        raise PydanticCustomError("label", problem)
    return value


# What a name may be (it names a file, a page, a job) and what one line of text shown in a table
# may hold.
Name = Annotated[str, pydantic.AfterValidator(_name)]
Label = Annotated[str, pydantic.AfterValidator(_label)]
