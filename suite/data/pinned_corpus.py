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
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from suite.data.archive import CorpusArchiveError, Pinned, extract, manifest_path, read_manifest, verified_archive
from suite.data.corpus import CORPUS_SOURCES, CorpusPathError
from suite.data.file_corpus import _Files, load_files
from suite.data.hf_corpus import cache_root

if TYPE_CHECKING:  # data never imports specs at run time
    from suite.specs import CorpusSpec

STDLIB = "python-stdlib-3.11.7"  # what the published runs read; a new version is a new corpus (new run ids)


MARKER = "fingerprint"  # beside files/ in a cache entry: the content fingerprint verified when it was extracted


def pinned_root(pinned: Pinned) -> Path:
    """The archive's files on disk: ``<cache>/pinned-v2/<name>-<version>-<sha256[:16]>/files/``,
    extracted on first use (``pinned-v2``: an older checkout's entries, ``pinned/``, hold the files
    at their top and no marker; the two never share a folder, so neither reads the other's as
    its corpus). The shipped archive is checked against its manifest on every call,
    cached or not. An entry is built whole in a fresh temporary folder beside it (unique across
    the machines of a shared home, as a cluster's nodes have), its content fingerprint computed
    from the members as they are written and compared with the manifest's, recorded in its
    marker file only then, and renamed into place: two workers never see half of it. A cached
    entry is trusted only when its marker holds the manifest's fingerprint and its files are as
    many, and as large in all, as the manifest says; any other (damaged, cut short, written by
    an older layout) is extracted again and replaced, so the run ids it gives never change."""
    verified_archive(pinned)
    entry = cache_root() / "pinned-v2" / f"{pinned.path.stem}-{pinned.manifest.sha256[:16]}"
    if _trusted(entry, pinned):
        return entry / "files"
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".tmp-"))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would keep the entry from a cache shared by a group
        (tmp / "files").mkdir()
        got = extract(pinned, tmp / "files")
        if got != pinned.manifest.fingerprint:
            raise CorpusArchiveError(f"{pinned.path}: fingerprint {pinned.manifest.fingerprint} does not match "
                                     f"its archive's content ({got})")
        (tmp / MARKER).write_text(got + "\n")
        _place(tmp, entry, pinned)
    finally:
        _remove(tmp)
    return entry / "files"


def _trusted(entry: Path, pinned: Pinned) -> bool:
    """Whether a cache entry holds the verified extraction of ``pinned`` (its marker, its file
    count and bytes: statted, not read)."""
    try:
        if (entry / MARKER).read_text().strip() != pinned.manifest.fingerprint:
            return False
        files = [p for p in (entry / "files").rglob("*") if not p.is_dir()]
        return (len(files) == pinned.manifest.files and all(p.is_file() and not p.is_symlink() for p in files)
                and sum(p.stat().st_size for p in files) == pinned.manifest.bytes)
    except OSError:
        return False


def _place(tmp: Path, entry: Path, pinned: Pinned) -> None:
    """Rename the finished ``tmp`` to ``entry``; an untrusted entry there is moved aside first.
    Another worker's trusted entry, placed meanwhile, is kept (its content is the same)."""
    problem: OSError | None = None
    for _ in range(5):
        try:
            os.rename(tmp, entry)
            return
        except OSError as exc:
            problem = exc
        if _trusted(entry, pinned):
            return  # another worker's finished copy
        aside = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".tmp-"))
        try:
            os.rename(entry, aside / "old")  # whole, so no reader sees it half removed
        except OSError:
            pass  # gone already (another worker moved it first): try again
        finally:
            _remove(aside)
    raise CorpusArchiveError(f"{entry}: the fresh extraction cannot be put in place ({problem})")


def _remove(folder: Path) -> None:
    """Remove ``folder`` and its read-only files."""
    shutil.rmtree(folder, ignore_errors=True)


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
