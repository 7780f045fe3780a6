"""The offline GLUE-style battery: eight short tasks with GLUE's task types and
metrics, built so that the ORDER of characters is what decides the label.

Each task mirrors one GLUE task (type, number of labels, metric, label convention
of the Hugging Face `glue` dataset) and is built from real lines of code (the
caller passes them, e.g. the Python standard library's source) or from a seeded
generator. Labels are correct by construction and checked by independent solvers
in tests/data/test_glue_tasks.py.

task          GLUE   text_a / text_b                  labels
acceptability CoLA   line, or it with 2 chars swapped 0 two distinct characters swapped, 1 the real line
order         SST-2  lowercase text with one A, one B 0 B comes first, 1 A comes first
paraphrase    MRPC   line / copy or adjacent swap     0 two adjacent distinct characters swapped, 1 copy
similarity    STS-B  line / line, k transpositions    score 5 - k = 5 - (positions that differ) / 2
duplicate     QQP    line / line in 0..6 spaces       0 a block of 2..8 characters moved, 1 unchanged
inference     MNLI   line / 6..16 characters          0 a span, 1 a shuffled span that is no span,
                                                      2 a span with 1..3 characters not in the line
qa_alignment  QNLI   "ab=17; cd=42; ..." / "cd 42"    0 the value is that key's, 1 another key's
rte           RTE    line / 6..16 characters          0 a span, 1 a shuffled span that is no span

Why a bag-of-characters model is at chance: all classes of an example come from
one candidate (one line, one span, one set of positions, one padding) and differ
only in the order of the same characters, so neither the characters nor the
lengths depend on the label; a candidate that cannot give every class is
rejected before its label is looked at. The one exception is by design:
`inference`'s contradiction class is visible in the characters; entailment vs
neutral is not.

Splits: lines are assigned to dev or train by a hash of their content (one in
four goes to dev), so no line is seen in both splits and the dev set does not
depend on the train size. No (text_a, text_b) pair occurs twice in or across
splits. Each split's labels are balanced to within one example.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal, Sequence

from suite.core.registry import Registry
from suite.data.glue_makers import (PRINTABLE, SIMILARITY_MAX, _acceptability, _duplicate, _inference, _order,
                                    _paraphrase, _qa_alignment, _rte, _similarity)

SEPARATOR = "\x1f"  # ASCII unit separator; every part is printable ASCII, so it never occurs in one
MAX_BYTES = 128  # longest model input of any example, separator included
LINE_MIN_CHARS, LINE_MAX_CHARS = 20, 60  # two lines plus padding must fit in MAX_BYTES
LINE_MIN_DISTINCT = 8  # a line of few distinct characters has too few swaps that change it
DEV_LINE_SHARE = 4  # one line in DEV_LINE_SHARE (by content hash) belongs to dev
MAX_TRIES = 1000  # candidates drawn per example before giving up on the line pool



@dataclass(frozen=True)
class GlueExample:
    text_a: str
    text_b: str | None  # None for single-text tasks
    label: int | float  # int class for classification, float score for regression


Pair = tuple[str, str | None]
# A generator draws one candidate and returns one (text_a, text_b) per entry of the
# task's label_values, in that order, or None to reject the candidate.
Generator = Callable[[random.Random, Sequence[str], frozenset[str]], tuple[Pair, ...] | None]


@dataclass(frozen=True)
class GlueTask:
    name: str
    glue_analogue: str  # the GLUE task whose type, metrics and label convention it copies
    kind: Literal["classification", "regression"]
    num_labels: int  # head outputs: the number of classes, 1 for regression
    metrics: tuple[str, ...]  # GLUE's metrics for the analogue; the task's score is their mean
    main_metric: str  # the one a single column shows: GLUE's first
    label_values: tuple[int | float, ...]  # the values balanced in each split
    description: str  # what each label means
    make: Generator = field(repr=False, compare=False)
    uses_lines: bool = True  # False: generated from the seed alone
    version: int = 1  # bump when the generator changes; it seeds the generator
    train_size: int = 2000
    dev_size: int = 500

    @property
    def regression(self) -> bool:
        return self.kind == "regression"

    def __post_init__(self) -> None:
        if self.kind not in ("classification", "regression"):
            raise ValueError(f"{self.name}: kind must be classification or regression, not {self.kind!r}")
        expected = 1 if self.kind == "regression" else len(self.label_values)
        if self.num_labels != expected:
            raise ValueError(f"{self.name}: num_labels is {self.num_labels}, expected {expected}")
        if self.main_metric not in self.metrics:
            raise ValueError(f"{self.name}: main_metric {self.main_metric!r} is not one of {self.metrics}")


def eligible_lines(lines: Iterable[str]) -> list[str]:
    """The stripped lines usable as examples, unique and sorted: printable ASCII,
    LINE_MIN_CHARS..LINE_MAX_CHARS long, at least LINE_MIN_DISTINCT distinct characters."""
    keep = set()
    for raw in lines:
        line = raw.strip()
        if (
            LINE_MIN_CHARS <= len(line) <= LINE_MAX_CHARS
            and PRINTABLE.issuperset(line)
            and len(set(line)) >= LINE_MIN_DISTINCT
        ):
            keep.add(line)
    return sorted(keep)


def input_text(example: GlueExample) -> str:
    """What the model reads: text_a, or text_a SEPARATOR text_b for a pair."""
    if example.text_b is None:
        return example.text_a
    return example.text_a + SEPARATOR + example.text_b


def get_task(name: str) -> GlueTask:
    return TASKS.member(name)


def build_task(
    name: str,
    lines: Sequence[str],
    seed: int,
    train_size: int | None = None,
    dev_size: int | None = None,
) -> tuple[list[GlueExample], list[GlueExample]]:
    """(train, dev) for a task; deterministic for (name, version, seed, set of eligible lines).

    The dev split is drawn first from its own generator, so it does not change with
    train_size; train then avoids every pair dev holds."""
    task = get_task(name)
    n_train = task.train_size if train_size is None else train_size
    n_dev = task.dev_size if dev_size is None else dev_size
    if n_train < 0 or n_dev < 0:
        raise ValueError(f"{name}: split sizes must be >= 0, got train {n_train}, dev {n_dev}")
    eligible = eligible_lines(lines)
    known = frozenset(eligible)
    dev_pool = [line for line in eligible if _is_dev_line(line)]
    train_pool = [line for line in eligible if not _is_dev_line(line)]
    seen: set[Pair] = set()
    stream = f"posbench.glue/{task.name}/v{task.version}/seed={seed}"
    dev = _draw(task, random.Random(stream + "/dev"), dev_pool, known, n_dev, seen, "dev")
    train = _draw(task, random.Random(stream + "/train"), train_pool, known, n_train, seen, "train")
    return train, dev


def _is_dev_line(line: str) -> bool:
    digest = hashlib.sha256(line.encode("ascii")).digest()
    return int.from_bytes(digest[:4], "big") % DEV_LINE_SHARE == 0


def _draw(
    task: GlueTask,
    rng: random.Random,
    pool: Sequence[str],
    known: frozenset[str],
    n: int,
    seen: set[Pair],
    split: str,
) -> list[GlueExample]:
    if task.uses_lines and n > 0 and not pool:
        raise ValueError(f"{task.name}: no eligible lines for the {split} split; pass more lines")
    labels = [task.label_values[i % len(task.label_values)] for i in range(n)]
    rng.shuffle(labels)
    return [_draw_one(task, rng, pool, known, label, seen, split) for label in labels]


def _draw_one(
    task: GlueTask,
    rng: random.Random,
    pool: Sequence[str],
    known: frozenset[str],
    label: int | float,
    seen: set[Pair],
    split: str,
) -> GlueExample:
    which = task.label_values.index(label)
    for _ in range(MAX_TRIES):
        variants = task.make(rng, pool, known)
        if variants is None:
            continue
        pair = variants[which]
        if pair not in seen:
            seen.add(pair)
            return GlueExample(pair[0], pair[1], label)
    raise ValueError(
        f"{task.name}: could not draw a new {split} example with label {label} in {MAX_TRIES} tries "
        f"from {len(pool)} eligible lines; pass more lines or ask for fewer examples"
    )


_BINARY = (0, 1)
_ACCURACY = ("accuracy",)


def _task(name: str, glue_analogue: str, metrics: tuple[str, ...], label_values: tuple, **rest) -> GlueTask:
    regression = isinstance(label_values[0], float)
    return GlueTask(
        name=name,
        glue_analogue=glue_analogue,
        kind="regression" if regression else "classification",
        num_labels=1 if regression else len(label_values),
        metrics=metrics,
        main_metric=metrics[0],
        label_values=label_values,
        **rest,
    )


TASKS: Registry[GlueTask] = Registry("GLUE-style task", GlueTask)
"""The offline battery's tasks, in GLUE's order of their analogues."""
for _task_ in (
    _task(
        "acceptability", "CoLA", ("matthews",), _BINARY, make=_acceptability,
        description="0: a real line with two distinct characters swapped; 1: the real line",
    ),
    _task(
        "order", "SST-2", _ACCURACY, _BINARY, make=_order, uses_lines=False,
        description="a lowercase string with one 'A' and one 'B'; 0: B comes first; 1: A comes first",
    ),
    _task(
        "paraphrase", "MRPC", ("f1", "accuracy"), _BINARY, make=_paraphrase,
        description="0: B is A with two adjacent distinct characters swapped; 1: B is an exact copy of A",
    ),
    _task(
        "similarity", "STS-B", ("pearson", "spearman"), tuple(float(s) for s in range(SIMILARITY_MAX + 1)),
        make=_similarity,
        description="B is A with 5 - score disjoint transpositions of adjacent distinct characters, "
        "so score = 5 - (number of positions where A and B differ) / 2",
    ),
    _task(
        "duplicate", "QQP", ("f1", "accuracy"), _BINARY, make=_duplicate,
        description="B is shifted inside 0..6 spaces of padding; 0: B is A with a block of 2..8 characters "
        "moved; 1: B is A",
    ),
    _task(
        "inference", "MNLI", _ACCURACY, (0, 1, 2), make=_inference,
        description="0 entailment: B is a span of A; 1 neutral: B is a span shuffled so it is no span of A; "
        "2 contradiction: B is a span with 1..3 characters replaced by characters not in A",
    ),
    _task(
        "qa_alignment", "QNLI", _ACCURACY, _BINARY, make=_qa_alignment, uses_lines=False,
        description="A is 'key=value; ...', B is 'key value'; 0 entailment: the value is that key's; "
        "1 not_entailment: the value is another key's",
    ),
    _task(
        "rte", "RTE", _ACCURACY, _BINARY, make=_rte, train_size=250,
        description="0 entailment: B is a span of A; 1 not_entailment: B is a span shuffled so it is no span of A",
    ),
):
    TASKS.add(_task_.name, _task_)
