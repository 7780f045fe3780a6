"""Language-modelling corpora: the corpus-source contract and its registry.

A task spec's ``corpus.kind`` names a source registered in :data:`CORPUS_SOURCES`:
``stdlib`` and ``pinned`` (archives shipped in corpora/, the same bytes on every machine,
:mod:`suite.data.pinned_corpus`), ``host-stdlib`` and ``folder`` (local files,
:mod:`suite.data.file_corpus`) and ``datasets`` (Hugging Face ``datasets``, offline and
memory-mapped, :mod:`suite.data.hf_corpus`).
Code asks the source, never compares the kind's name: adding a source is one class in
one module and its name in ``members`` below.

Every source gives the same three splits, each a uint8 tensor of bytes with documents
joined by :data:`DOCUMENT_SEPARATOR`, and a fingerprint of their content (part of every
training run id).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from suite.core.registry import Registry

if TYPE_CHECKING:  # data never imports specs at run time: the arrows go specs -> plan -> data
    from suite.specs import CorpusSpec

SPLITS = ("train", "validation", "test")
DOCUMENT_SEPARATOR = b"\n\x00\n"  # a byte that never occurs in source text marks file boundaries


def split_of(relative_path: str) -> str:
    """90 / 5 / 5 by a hash of the path: deterministic and independent of the file set."""
    bucket = int(hashlib.sha256(relative_path.encode()).hexdigest()[:8], 16) % 100
    return "train" if bucket < 90 else "validation" if bucket < 95 else "test"


@dataclass(frozen=True)
class Corpus:
    splits: dict[str, torch.Tensor]  # split -> uint8 token tensor
    fingerprint: str
    description: str
    n_files: int

    def __getitem__(self, split: str) -> torch.Tensor:
        return self.splits[split]


class CorpusPathError(ValueError):
    """A corpus spec's path that does not resolve: ``field`` (under ``corpus``) and why."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


class CorpusSource:
    """The interface; subclasses are registered in :data:`CORPUS_SOURCES` by ``CorpusSpec.kind``."""

    needs_dataset = False  # True: the spec names a dataset (and only such a source takes one)
    needs_archive = False  # True: the spec names a pinned archive of corpora/ (and only such a source takes one)

    # the spec's fields that say where the corpus lies on this machine, not what it holds: left out
    # of a run's id, which holds the content's fingerprint (suite.plan.grid.task_content)
    location_fields: tuple[str, ...] = ()

    def fingerprint(self, spec: CorpusSpec) -> str:
        """The content hash of :meth:`load`'s corpus, without building it (what ``plan`` needs)."""
        raise NotImplementedError

    def load(self, spec: CorpusSpec) -> Corpus:
        raise NotImplementedError

    def split_bytes(self, spec: CorpusSpec) -> dict[str, int] | None:
        """Each split's size in bytes, known before training; None where only reading tells."""
        return None

    def where(self, spec: CorpusSpec) -> str:
        """Where the corpus is, for messages."""
        raise NotImplementedError

    def resolve(self, spec: CorpusSpec, base: Path) -> CorpusSpec:
        """The spec with its paths made absolute (relative ones are to the task file's folder ``base``)."""
        return spec

    def check_recorded(self, spec: CorpusSpec, project_root: Path) -> None:
        """A spec rebuilt from a record (verify, replicate, eval), not read from a task file: raise
        CorpusPathError where it would read where no task file of ``project_root`` may read (a
        record is a stranger's; a task file's paths are checked by :meth:`resolve`). Nothing to
        check for a source that reads no path of this machine."""


CORPUS_SOURCES: Registry[CorpusSource] = Registry(
    "corpus source", CorpusSource, members=("suite.data.file_corpus", "suite.data.pinned_corpus", "suite.data.hf_corpus"))


def source_of(spec: CorpusSpec) -> CorpusSource:
    return CORPUS_SOURCES.get(spec.kind)()


@functools.lru_cache(maxsize=4)
def corpus_fingerprint(spec: CorpusSpec) -> str:
    return source_of(spec).fingerprint(spec)


@functools.lru_cache(maxsize=4)
def load_corpus(spec: CorpusSpec) -> Corpus:
    return source_of(spec).load(spec)
