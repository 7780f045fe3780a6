"""Corpora of local files: the running Python's standard library (``host-stdlib``) or a folder
of text files (``folder``), behind the corpus-source contract of :mod:`suite.data.corpus`;
the pinned archives of :mod:`suite.data.pinned_corpus` are read through the same functions.

Files are found at run time, ordered by relative path and assigned to train/validation/test
*by file* from a hash of their relative path (stable when files are added or removed), so no
test file's text is ever trained on. The fingerprint hashes every file's path and content;
it is part of every cell id and recorded with every run. The host's standard library differs
between Python builds (a distribution's Python 3.11 holds 668 of the 1,790 files of a full
3.11.7 build), which is why the published corpus is pinned (``stdlib``) and this one is only
ever an explicit choice.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import sysconfig
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from suite.data.corpus import CORPUS_SOURCES, DOCUMENT_SEPARATOR, SPLITS, Corpus, CorpusPathError, CorpusSource, split_of

if TYPE_CHECKING:  # data never imports specs at run time: the arrows go specs -> plan -> data
    from suite.specs import CorpusSpec


def corpus_root(spec: CorpusSpec) -> Path:
    return CORPUS_SOURCES.get(spec.kind)().root(spec)


@functools.lru_cache(maxsize=8)  # plan's checks and the fingerprint both list the corpus
def list_files(root: Path, glob: str) -> list[tuple[str, Path]]:
    """(relative posix path, file) pairs under ``root``, sorted; third-party packages are excluded,
    and so is a link that leads out of ``root``: a corpus is the files inside its folder, and a
    link to elsewhere (``/etc/...``, a user's home) must not become training or test text."""
    inside = root.resolve()
    files = (p for p in root.glob(glob) if p.is_file() and not {"site-packages", "dist-packages"} & set(p.parts)
             and p.resolve().is_relative_to(inside))
    return sorted((p.relative_to(root).as_posix(), p) for p in files)


def corpus_files(spec: CorpusSpec) -> list[tuple[str, Path]]:
    return list_files(corpus_root(spec), spec.glob)


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


def files_fingerprint(spec: CorpusSpec) -> str:
    digest = hashlib.sha256()
    for rel, data in _selected(spec):
        _digest(digest, rel, data)
    return digest.hexdigest()[:16]


def load_files(spec: CorpusSpec, where: str) -> Corpus:
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
    return Corpus(splits, digest.hexdigest()[:16], f"{where} ({n_files} files, {total:,} bytes)", n_files)


@functools.lru_cache(maxsize=8)
def files_split_bytes(corpus: CorpusSpec) -> dict[str, int]:
    """Bytes of each split as :func:`load_files` would build it, from file sizes alone
    (the same files, ``max_bytes`` and separators; nothing is read)."""
    sizes, counts, total = dict.fromkeys(SPLITS, 0), dict.fromkeys(SPLITS, 0), 0
    for rel, path in corpus_files(corpus):
        n = path.stat().st_size
        if corpus.max_bytes is not None and total + n > corpus.max_bytes:
            continue
        total += n
        sizes[split_of(rel)] += n
        counts[split_of(rel)] += 1
    return {s: sizes[s] + len(DOCUMENT_SEPARATOR) * max(0, counts[s] - 1) if counts[s] else 0 for s in SPLITS}


class _Files(CorpusSource):
    def fingerprint(self, spec):
        return files_fingerprint(spec)

    def split_bytes(self, spec):
        return files_split_bytes(spec)

    def where(self, spec):
        return f"{self.root(spec)} (glob {spec.glob!r})"


@CORPUS_SOURCES.register("host-stdlib")
class HostStdlib(_Files):
    """The running Python's standard library (third-party packages excluded): whatever this
    interpreter has, so its fingerprint and run ids depend on the machine. ``stdlib`` is the
    pinned one the published runs read."""

    def root(self, spec):
        return Path(sysconfig.get_paths()["stdlib"])

    def load(self, spec):
        return load_files(spec, f"Python {platform.python_version()} stdlib of this interpreter")


@CORPUS_SOURCES.register("folder")
class Folder(_Files):
    """A folder of text files, ``path`` relative to the task file."""

    location_fields = ("path",)  # made absolute when the task is read: a checkout's, not the files'

    def root(self, spec):
        return Path(spec.path)

    def load(self, spec):
        return load_files(spec, str(self.root(spec)))

    def resolve(self, spec, base):
        if not spec.path:
            raise CorpusPathError("path", "a folder corpus needs a path")
        folder = (base / spec.path).resolve()
        if not folder.is_dir():
            raise CorpusPathError("path", f"no such directory: {folder}")
        check_data_folder(folder, base, "path")  # a task file from anyone (a pull request) must not read the reviewer's files
        return spec.model_copy(update={"path": str(folder)})

    def check_recorded(self, spec, project_root):
        check_recorded_folder(spec.path or "", project_root, "path")


def check_recorded_folder(value: str, project_root: Path, field: str) -> None:
    """A data folder as a record names it: an absolute path (reading its task file made it one:
    a relative one would be read from wherever the command runs, ``~`` from a home folder), where
    :func:`check_data_folder` allows."""
    if not Path(value).is_absolute():
        raise CorpusPathError(field, f"{value!r}: a record names its data folder by an absolute path (its task file "
                                     "made it one); a relative one would be read from wherever the command runs")
    check_data_folder(Path(value), Path(project_root) / "tasks", field)


def check_data_folder(folder: Path, task_folder: Path, field: str) -> None:
    """CorpusPathError (on ``field``) unless ``folder`` (as it is read: relative to the working
    folder), links resolved, lies where a task file in ``task_folder`` may read: its project or a
    folder POSBENCH_DATA_DIRS names (:func:`allowed_data_roots`)."""
    folder = Path(folder).resolve()
    allowed = allowed_data_roots(task_folder)
    if not any(folder.is_relative_to(root) for root in allowed):
        raise CorpusPathError(field, f"{folder} is outside the project ({allowed[0]}); a data folder elsewhere "
                                     f"must be allowed by {DATA_DIRS_ENV} (folders separated by '{os.pathsep}')")


DATA_DIRS_ENV = "POSBENCH_DATA_DIRS"


def allowed_data_roots(task_folder: Path) -> list[Path]:
    """Where a folder corpus may lie: the project holding the task file (the folder above its
    tasks/ folder), and the folders ``POSBENCH_DATA_DIRS`` names."""
    project = task_folder.resolve().parent
    extra = [Path(p).resolve() for p in os.environ.get(DATA_DIRS_ENV, "").split(os.pathsep) if p.strip()]
    return [project, *extra]
