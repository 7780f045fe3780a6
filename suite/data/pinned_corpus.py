"""Pinned corpora (:mod:`suite.data.archive`) behind the corpus-source contract.

``stdlib`` is CPython 3.11.7's standard library exactly as the published runs read it
(``corpora/python-stdlib-3.11.7``): the same bytes on every machine and under every
Python, so its fingerprint, ``7b1317fbe41342ed``, and every run id that holds it stay
what they were. ``pinned`` names any shipped archive (``archive: english-pd-1.0``).

An archive is checked and extracted once into the corpus cache, keyed by its sha256, and
then read exactly as a folder of files (:mod:`suite.data.file_corpus`: the same listing,
order, split by path and fingerprint), so a pinned corpus and the folder it was made from
give the identical :class:`~suite.data.corpus.Corpus`.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from suite.data.archive import CorpusArchiveError, Pinned, extract, manifest_path, read_manifest, verified_archive
from suite.data.corpus import CORPUS_SOURCES, CorpusPathError
from suite.data.file_corpus import _Files, list_files, load_files
from suite.data.hf_corpus import cache_root

if TYPE_CHECKING:  # data never imports specs at run time
    from suite.specs import CorpusSpec

STDLIB = "python-stdlib-3.11.7"  # what the published runs read; a new version is a new corpus (new run ids)


def pinned_root(pinned: Pinned) -> Path:
    """The archive's files on disk: ``<cache>/pinned/<name>-<version>-<sha256[:16]>/``, extracted
    on first use (to a temporary folder renamed into place, so two workers never see half of it).
    The shipped archive is checked against its manifest on every call, cached or not."""
    verified_archive(pinned)
    folder = cache_root() / "pinned" / f"{pinned.path.stem}-{pinned.manifest.sha256[:16]}"
    if folder.is_dir():
        return folder
    tmp = folder.with_name(f".tmp-{os.getpid()}-{folder.name}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        extract(pinned, tmp)
        got = _whole_fingerprint(tmp)
        if got != pinned.manifest.fingerprint:
            raise CorpusArchiveError(f"{pinned.path}: fingerprint {pinned.manifest.fingerprint} does not match "
                                     f"its archive's content ({got})")
        try:
            os.rename(tmp, folder)
        except OSError:
            if not folder.is_dir():
                raise  # not another worker's finished copy: a real failure
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _whole_fingerprint(root: Path) -> str:
    from suite.data.archive import content_fingerprint

    return content_fingerprint((rel, path.read_bytes()) for rel, path in list_files(root, "**/*"))


@functools.lru_cache(maxsize=8)
def _manifest(name: str) -> Pinned:
    return read_manifest(manifest_path(name))


class _PinnedFiles(_Files):
    """A shipped archive, read as the folder of files it was made from."""

    def pinned(self, spec: CorpusSpec) -> Pinned:
        raise NotImplementedError

    def root(self, spec):
        return pinned_root(self.pinned(spec))

    def label(self, pinned: Pinned) -> str:
        return f"{pinned.label}, pinned"

    def load(self, spec):
        pinned = self.pinned(spec)
        return load_files(spec, self.label(pinned))

    def where(self, spec):
        pinned = self.pinned(spec)
        return f"{pinned.manifest.archive} ({pinned.label}, pinned; glob {spec.glob!r})"

    field = "kind"  # the spec's field that names the archive, for a task file's message

    def resolve(self, spec, base):
        """The spec unchanged once its manifest reads and its archive is there: a missing or bad
        one is the task file's problem, reported at its line (CorpusPathError), not a traceback
        of whatever command first reads the corpus. Its sha256 is checked on use."""
        try:
            pinned = self.pinned(spec)
        except CorpusArchiveError as exc:
            raise CorpusPathError(self.field, str(exc)) from None
        if not pinned.archive.is_file():
            raise CorpusPathError(self.field, f"{pinned.archive}: missing (the archive of {pinned.path.name}); "
                                              "restore it from the repository")
        return spec


@CORPUS_SOURCES.register("stdlib")
class Stdlib(_PinnedFiles):
    """CPython 3.11.7's standard library, pinned: the published runs' corpus on any machine.
    The running Python's own is ``host-stdlib``."""

    def pinned(self, spec):
        return _manifest(STDLIB)

    def label(self, pinned):
        return "Python 3.11 stdlib"  # the published records' words: the site lists corpora by them


@CORPUS_SOURCES.register("pinned")
class PinnedArchive(_PinnedFiles):
    """Any archive in corpora/, by ``archive: <name>-<version>``."""

    needs_archive = True
    field = "archive"

    def pinned(self, spec):
        return _manifest(spec.archive)
