"""Grid expansion: a pure function from a loaded grid to its cells, and plan/status.

A cell that trains is (encoding, size, task, seed); the scale axis is evaluation
time, so one cell's record holds every scale. The cell id is a content hash of
everything that changes the result: resolved encoding params, model size, task,
seed, training and evaluation recipe, scales, the data fingerprint and
``RECIPE_VERSION``. The encoding's name is hashed too, so two specs never share a
record. The git commit is provenance, recorded but not hashed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

from . import RECIPE_VERSION
from .data.corpus import load_corpus
from .specs import EncodingSpec, EvalRecipe, GlueRecipe, Grid, SizeSpec, TaskSpec, TrainRecipe


@dataclass(frozen=True)
class Cell:
    encoding: EncodingSpec
    size: SizeSpec
    task: TaskSpec
    seed: int
    scales: tuple[int, ...]
    train: TrainRecipe
    eval: EvalRecipe
    data_fingerprint: str
    glue: GlueRecipe | None = None  # GLUE-style fine-tuning of this cell's backbone, if the grid asks

    def content(self) -> dict:
        """Everything that changes the result, in canonical JSON-able form."""
        return {
            "recipe_version": RECIPE_VERSION,
            "encoding": {"name": self.encoding.name, "impl": self.encoding.impl,
                         "params": dataclasses.asdict(self.encoding.resolved_params())},
            "size": self.size.model_dump(exclude={"name", "description"}),
            "task": self.task.model_dump(exclude={"name", "description"}),
            "seed": self.seed,
            "scales": list(self.scales),
            "train": self.train.model_dump(),
            "eval": self.eval.model_dump(),
            "data_fingerprint": self.data_fingerprint,
            **({"glue": self.glue.model_dump()} if self.glue is not None else {}),
        }

    @property
    def cell_id(self) -> str:
        blob = json.dumps(self.content(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        return f"{self.encoding.name}/{self.size.name}/{self.task.name}/seed{self.seed}"

    def to_dict(self) -> dict:
        """The full cell (specs with their names), enough to rebuild it: :meth:`from_dict`."""
        return {
            "encoding": self.encoding.model_dump(), "encoding_source": self.encoding.source,
            "size": self.size.model_dump(), "task": self.task.model_dump(), "seed": self.seed,
            "scales": list(self.scales), "train": self.train.model_dump(), "eval": self.eval.model_dump(),
            "data_fingerprint": self.data_fingerprint, "glue": self.glue.model_dump() if self.glue else None,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Cell":
        return cls(
            encoding=EncodingSpec.model_validate({**d["encoding"], "source": d.get("encoding_source", "")}),
            size=SizeSpec.model_validate(d["size"]), task=TaskSpec.model_validate(d["task"]), seed=d["seed"],
            scales=tuple(d["scales"]), train=TrainRecipe.model_validate(d["train"]),
            eval=EvalRecipe.model_validate(d["eval"]), data_fingerprint=d["data_fingerprint"],
            glue=GlueRecipe.model_validate(d["glue"]) if d.get("glue") else None,
        )


def data_fingerprint(task: TaskSpec) -> str:
    """The corpus's content hash, or a generator's name and version."""
    if task.kind == "synthetic":
        from .data.synthetic import TASKS

        return f"{task.generator}-v{TASKS[task.generator].version}"
    return load_corpus(task.corpus).fingerprint


def expand(grid: Grid, fingerprint=data_fingerprint) -> list[Cell]:
    """Every (encoding, size, task, seed) of the grid, in the order the spec lists them."""
    spec = grid.spec

    def recipe(task: TaskSpec) -> TrainRecipe:
        return spec.task_train if task.kind == "synthetic" and spec.task_train is not None else spec.train

    return [
        Cell(enc, size, task, seed, tuple(spec.scales), recipe(task), spec.eval, fingerprint(task),
             spec.glue if task.kind == "lm" else None)
        for enc, size, task, seed in itertools.product(grid.encodings, grid.sizes, grid.tasks, spec.seeds)
    ]


def cell_status(cell: Cell, runs_dir: Path) -> str:
    """done / failed (its record says so) or todo (no record)."""
    from .records import read_record

    path = runs_dir / f"{cell.cell_id}.json"
    if not path.exists():
        return "todo"
    return read_record(path)["status"]
