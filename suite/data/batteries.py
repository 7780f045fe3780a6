"""GLUE-style batteries behind one interface: the tasks a battery has, and their data.

A grid's ``glue.battery`` names one of these (``offline``: built here from the pinned standard
library's source (:mod:`suite.data.pinned_corpus`), :mod:`suite.data.glue_tasks`; ``glue``: the real GLUE through
``datasets`` or a folder in GLUE's format, :mod:`suite.data.glue_data`). Code asks the
battery, never compares its name.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from suite.core.registry import Registry
from suite.data import glue_tasks
from suite.data.file_corpus import list_files
from suite.data.pinned_corpus import Stdlib

if TYPE_CHECKING:  # data never imports specs at run time
    from suite.specs import GlueRecipe


class Battery:
    """The interface; subclasses are registered in :data:`BATTERIES` by ``GlueRecipe.battery``."""

    balanced = False  # every task balances its labels, so a uniform guess has a chance level

    def task_names(self) -> tuple[str, ...]:
        raise NotImplementedError

    def load(self, name: str, recipe: GlueRecipe, seed: int):
        """(task metadata, train examples, dev examples)."""
        raise NotImplementedError

    def unavailable(self) -> tuple[type[Exception], ...]:
        """Exceptions of :meth:`load` that mean "this task's data is not on this machine":
        the task is skipped with the reason, never failed."""
        return ()


BATTERIES: Registry[Battery] = Registry("GLUE-style battery", Battery)


def battery_of(recipe: GlueRecipe) -> Battery:
    return BATTERIES.get(recipe.battery)()


@functools.lru_cache(maxsize=1)
def stdlib_lines() -> tuple[str, ...]:
    """Lines of real code for the offline battery: the pinned standard library's source (the
    same lines on every machine), already reduced to the lines the battery can use (so each task does not redo it)."""
    lines = []
    for _, path in list_files(Stdlib().root(None), "**/*.py"):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return tuple(glue_tasks.eligible_lines(lines))


@functools.lru_cache(maxsize=64)
def offline_task_data(name: str, seed: int, train_size: int, dev_size: int):
    """(train, dev) of an offline task; every encoding of a grid gets the same, so build it once."""
    return glue_tasks.build_task(name, stdlib_lines(), seed, train_size, dev_size)


@BATTERIES.register("offline")
class Offline(Battery):
    """Eight tasks of GLUE's types built from the pinned stdlib's lines (shipped in corpora/)."""

    balanced = True

    def task_names(self):
        return tuple(glue_tasks.TASKS)

    def load(self, name, recipe, seed):
        task = glue_tasks.get_task(name)
        # `budget` scales every task's own sizes, so the low-data task stays low-data
        train_size, dev_size = (max(8, round(n * recipe.budget)) for n in (task.train_size, task.dev_size))
        train, dev = offline_task_data(name, seed, train_size, dev_size)
        return task, train, dev


@BATTERIES.register("glue")
class RealGlue(Battery):
    """The real GLUE; imports ``datasets`` only when it is asked for. Its labels are not balanced."""

    def task_names(self):
        from suite.data.glue_data import GLUE_TASKS

        return tuple(GLUE_TASKS)

    def load(self, name, recipe, seed):
        from suite.data.glue_data import GLUE_TASKS, load_glue

        glue_dir = Path(recipe.glue_dir) if recipe.glue_dir else None
        train, dev = load_glue(name, glue_dir, recipe.max_train, recipe.max_dev, seed)
        return GLUE_TASKS[name], train, dev

    def unavailable(self):
        from suite.data.glue_data import GlueUnavailable

        return (GlueUnavailable,)
