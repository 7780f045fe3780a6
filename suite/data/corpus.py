"""Language-modelling corpora: the Python standard library's own source, or a local folder
(and, through ``datasets``, the field's corpora: :mod:`suite.data.hf_corpus`).

The stdlib corpus exists on every machine that runs PosBench. Files are found at run
time, ordered by relative path and assigned to train/validation/test *by file* from a
hash of their relative path (stable when files are added or removed), so no test
file's text is ever trained on. The fingerprint hashes every file's path and content;
it is part of every cell id and recorded with every run, because the standard library
differs between Python versions.
"""

from __future__ import annotations

import functools
import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # data never imports specs at run time: the arrows go specs -> grid -> data
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


def corpus_root(spec: CorpusSpec) -> Path:
    return Path(spec.path) if spec.kind == "folder" else Path(sysconfig.get_paths()["stdlib"])


@functools.lru_cache(maxsize=8)  # plan's checks and the fingerprint both list the corpus
def corpus_files(spec: CorpusSpec) -> list[tuple[str, Path]]:
    """(relative posix path, file) pairs, sorted; third-party packages are excluded."""
    root = corpus_root(spec)
    files = (p for p in root.glob(spec.glob) if p.is_file() and not {"site-packages", "dist-packages"} & set(p.parts))
    return sorted((p.relative_to(root).as_posix(), p) for p in files)


def _selected(spec: CorpusSpec):
    """(relative path, bytes) of every file the corpus keeps, in order (``max_bytes`` applied)."""
    files = corpus_files(spec)
    if not files:
        raise ValueError(f"corpus {spec.kind} at {corpus_root(spec)} has no files matching {spec.glob!r}")
    total = 0
    for rel, path in files:
        data = path.read_bytes()
        if spec.max_bytes is not None and total + len(data) > spec.max_bytes:
            continue
        total += len(data)
        yield rel, data


def _digest(digest, rel: str, data: bytes) -> None:
    digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())


@functools.lru_cache(maxsize=4)
def corpus_fingerprint(spec: CorpusSpec) -> str:
    """The content hash of :func:`load_corpus`, without building the corpus (what `plan` needs)."""
    if spec.kind == "datasets":
        from suite.data.hf_corpus import hf_corpus_fingerprint

        return hf_corpus_fingerprint(spec)
    digest = hashlib.sha256()
    for rel, data in _selected(spec):
        _digest(digest, rel, data)
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def load_corpus(spec: CorpusSpec) -> Corpus:
    if spec.kind == "datasets":
        from suite.data.hf_corpus import load_hf_corpus

        return load_hf_corpus(spec)
    digest = hashlib.sha256()
    parts: dict[str, list[bytes]] = {s: [] for s in SPLITS}
    total, n_files = 0, 0
    for rel, data in _selected(spec):
        total, n_files = total + len(data), n_files + 1
        _digest(digest, rel, data)
        parts[split_of(rel)].append(data)
    for split, chunks in parts.items():
        if not chunks:
            raise ValueError(f"corpus at {corpus_root(spec)} has no {split} files: it needs more files")
    splits = {s: torch.frombuffer(bytearray(DOCUMENT_SEPARATOR.join(chunks)), dtype=torch.uint8) for s, chunks in parts.items()}
    where = f"Python {sysconfig.get_python_version()} stdlib" if spec.kind == "stdlib" else str(corpus_root(spec))
    return Corpus(splits, digest.hexdigest()[:16], f"{where} ({n_files} files, {total:,} bytes)", n_files)
