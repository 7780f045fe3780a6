"""Pinned corpus archives: ``corpora/<name>-<version>.tar.xz`` and the manifest beside it.

A published figure is only reproducible if every machine trains on the same bytes, so a
corpus the published grids read is an artifact shipped with the repository, not whatever
the machine happens to have: a deterministic tar (sorted members, no owners, times or
modes of the machine that built it), xz-compressed, described by a small manifest YAML
(name, version, the archive's sha256, the uncompressed tar's sha256, the content
fingerprint of :mod:`suite.data.file_corpus`, sizes, licence).

Reading is for strangers' bytes too (an archive edited in a pull request, with a manifest
to match): the archive file is read once into memory (refused above :data:`MAX_XZ_BYTES`),
its sha256 checked against the manifest on those very bytes, decompressed to at most what the
manifest's counts allow (never a bomb), the uncompressed tar's sha256 checked, and only then
is the tar parsed, from memory. Every member must be a regular file with a plain relative
path, no name twice (letter case ignored) and none both a file and a folder of another,
within the manifest's count and size caps; a damaged stream is refused in one line like any
other problem. The uncompressed tar's sha256 does not depend on the xz library's version, so
a rebuild on another machine can be compared with the manifest (``scripts/corpora/``).
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pydantic

from suite.core.yamldoc import read_yaml

CORPORA = Path(__file__).resolve().parents[2] / "corpora"  # shipped with the repository, beside suite/
MAX_MEMBER_BYTES = 64 * 2**20  # one document: no source file or book comes near it
MAX_ARCHIVE_BYTES = 2**30  # all members together, uncompressed
MAX_MEMBERS = 100_000
MAX_XZ_BYTES = 64 * 2**20  # the archive file, read whole into memory: the shipped ones are 2.5 and 4.6 MB
# the tar around the members, beyond their bytes: per member a header block, a PAX header (its block
# and one of records) and up to 511 bytes of padding; then the end-of-archive blocks and tarfile's
# padding to a whole 10 KiB record
TAR_MEMBER_OVERHEAD = 2048
TAR_END_SLACK = 20 * 1024
XZ_PRESET = 9  # the archive's bytes depend on it: changing it changes every shipped archive's sha256
_MEMBER = re.compile(r"[A-Za-z0-9_.+\-]+(/[A-Za-z0-9_.+\-]+)*")  # plain names, no spaces or odd bytes


class CorpusArchiveError(ValueError):
    """A pinned corpus that cannot be used: one line naming the file and what is wrong."""


class Manifest(pydantic.BaseModel):
    """``corpora/<name>-<version>.yaml``: what the archive beside it holds and under which licence."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    name: str = pydantic.Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    version: str = pydantic.Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.]*$")
    description: str
    archive: str = pydantic.Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.\-]*\.tar\.xz$")  # beside the manifest
    sha256: str = pydantic.Field(pattern=r"^[0-9a-f]{64}$")  # of the archive file, checked before every use
    tar_sha256: str = pydantic.Field(pattern=r"^[0-9a-f]{64}$")  # of the uncompressed tar (xz-independent)
    fingerprint: str = pydantic.Field(pattern=r"^[0-9a-f]{16}$")  # suite.data.file_corpus's, of every member
    files: int = pydantic.Field(gt=0, le=MAX_MEMBERS)
    bytes: int = pydantic.Field(gt=0, le=MAX_ARCHIVE_BYTES)
    licence: str
    licence_file: str = pydantic.Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9.\-]*$")  # beside the manifest
    built_by: str  # the script that makes the archive, and from what
    sources: list[dict] = []  # pinned inputs (package, version, file, sha256), where it is built from packages


@dataclass(frozen=True)
class Pinned:
    """A manifest and where it lies."""

    manifest: Manifest
    path: Path  # the manifest file

    @property
    def archive(self) -> Path:
        return self.path.parent / self.manifest.archive

    @property
    def label(self) -> str:
        return f"{self.manifest.name} {self.manifest.version}"


def manifest_path(name: str, corpora: Path = CORPORA) -> Path:
    return corpora / f"{name}.yaml"


def read_manifest(path: Path) -> Pinned:
    """The manifest at ``path``, or CorpusArchiveError naming the file, line and field."""
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml")) if path.parent.is_dir() else []
        raise CorpusArchiveError(f"no pinned corpus {path.stem!r} ({path} does not exist); "
                                 f"shipped: {', '.join(known) or 'none'}")
    doc = read_yaml(path)
    if doc.problems:
        raise CorpusArchiveError(str(doc.problems[0]))
    if not isinstance(doc.data, dict):
        raise CorpusArchiveError(f"{path}: a manifest is a mapping of fields")
    try:
        manifest = Manifest.model_validate(doc.data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        raise CorpusArchiveError(f"{path}:{doc.line(loc)}: {'.'.join(map(str, loc))}: {first['msg']}") from None
    if f"{manifest.name}-{manifest.version}" != path.stem:
        raise CorpusArchiveError(f"{path}: name and version ({manifest.name}-{manifest.version}) must match the file name")
    if not (path.parent / manifest.licence_file).is_file():
        raise CorpusArchiveError(f"{path}: licence_file {manifest.licence_file} is missing: a corpus ships with its licence")
    return Pinned(manifest, path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_archive(pinned: Pinned) -> Path:
    """The archive's path once its sha256 matches the manifest's; otherwise one line saying so."""
    verified_bytes(pinned)
    return pinned.archive


def verified_bytes(pinned: Pinned) -> bytes:
    """The archive file's bytes, read once (at most :data:`MAX_XZ_BYTES`), once their sha256
    matches the manifest's: what is checked is what is then read, whatever the file becomes."""
    archive = pinned.archive
    if not archive.is_file():
        raise CorpusArchiveError(f"{archive}: missing (the archive of {pinned.path.name}); restore it from the repository")
    chunks, size = [], 0
    with open(archive, "rb") as f:
        if os.fstat(f.fileno()).st_size > MAX_XZ_BYTES:  # before a byte is read; the loop bounds a file still growing
            raise CorpusArchiveError(f"{archive}: larger than {MAX_XZ_BYTES:,} bytes, the most an archive may be")
        while size <= MAX_XZ_BYTES and (chunk := f.read(min(1 << 20, MAX_XZ_BYTES + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    if size > MAX_XZ_BYTES:
        raise CorpusArchiveError(f"{archive}: larger than {MAX_XZ_BYTES:,} bytes, the most an archive may be")
    data = b"".join(chunks)
    actual = hashlib.sha256(data).hexdigest()
    if actual != pinned.manifest.sha256:
        raise CorpusArchiveError(f"{archive}: sha256 {actual[:16]}... does not match its manifest {pinned.path.name} "
                                 f"({pinned.manifest.sha256[:16]}...): the archive was changed or damaged; "
                                 "restore it from the repository")
    return data


def tar_limit(manifest: Manifest) -> int:
    """The most bytes the manifest's tar can decompress to: its members' bytes and the tar around them."""
    return min(manifest.bytes, MAX_ARCHIVE_BYTES) + TAR_MEMBER_OVERHEAD * min(manifest.files, MAX_MEMBERS) + TAR_END_SLACK


def verified_tar(pinned: Pinned) -> bytes:
    """The uncompressed tar of the verified archive, decompressed no further than :func:`tar_limit`
    and checked against the manifest's ``tar_sha256``."""
    archive, manifest = pinned.archive, pinned.manifest
    data = verified_bytes(pinned)
    limit = tar_limit(manifest)
    decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        raw = decompressor.decompress(data, max_length=limit)
    except lzma.LZMAError as exc:
        raise CorpusArchiveError(f"{archive.name}: not a readable xz stream ({exc})") from None
    if not decompressor.eof:
        if len(raw) >= limit:
            raise CorpusArchiveError(f"{archive.name}: decompresses to more than {limit:,} bytes, more than its "
                                     f"manifest's {manifest.files} files and {manifest.bytes:,} bytes can fill")
        raise CorpusArchiveError(f"{archive.name}: the xz stream ends early (truncated)")
    actual = hashlib.sha256(raw).hexdigest()
    if actual != manifest.tar_sha256:
        raise CorpusArchiveError(f"{archive.name}: the uncompressed tar's sha256 {actual[:16]}... does not match its "
                                 f"manifest {pinned.path.name} ({manifest.tar_sha256[:16]}...)")
    return raw


def check_member_name(name: str) -> None:
    if not _MEMBER.fullmatch(name) or any(part in {".", ".."} for part in name.split("/")):
        raise CorpusArchiveError(f"member {name!r}: not a plain relative path")


def read_members(pinned: Pinned) -> Iterable[tuple[str, bytes]]:
    """(name, bytes) of every member of the verified archive (:func:`verified_tar`), in archive
    order, each checked: regular files only (no links, devices or folders), plain relative names,
    no name twice and no name a folder of another (either compared with letter case ignored:
    extracted on a case-insensitive disk, or beside each other, they would collide), and no
    more members or bytes than the manifest says (and the module's caps). A tar that cannot be
    read is refused in one line, as every problem is."""
    archive = pinned.archive
    raw = verified_tar(pinned)
    limit_files = min(pinned.manifest.files, MAX_MEMBERS)
    limit_bytes = min(pinned.manifest.bytes, MAX_ARCHIVE_BYTES)
    seen: dict[str, str] = {}  # case-folded name -> name
    folders: dict[str, str] = {}  # case-folded folder of a member -> that member
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for info in tar:
                where = f"{archive.name}: member {info.name!r}"
                if not info.isreg():
                    raise CorpusArchiveError(f"{where}: not a regular file (links, folders and devices are refused)")
                try:
                    check_member_name(info.name)
                except CorpusArchiveError as exc:
                    raise CorpusArchiveError(f"{archive.name}: {exc}") from None
                folded = info.name.casefold()
                if folded in seen:
                    raise CorpusArchiveError(f"{where}: appears twice (as {seen[folded]!r}; letter case is not told apart)")
                if folded in folders:
                    raise CorpusArchiveError(f"{where}: is a file and also the folder of {folders[folded]!r}")
                parts = folded.split("/")
                for k in range(1, len(parts)):
                    prefix = "/".join(parts[:k])
                    if prefix in seen:
                        raise CorpusArchiveError(f"{where}: lies in {seen[prefix]!r}, which is a file")
                    folders.setdefault(prefix, info.name)
                seen[folded] = info.name
                total += info.size
                if len(seen) > limit_files or info.size > MAX_MEMBER_BYTES or total > limit_bytes:
                    raise CorpusArchiveError(f"{where}: more members or bytes than its manifest's "
                                             f"{pinned.manifest.files} files and {pinned.manifest.bytes:,} bytes")
                data = tar.extractfile(info).read()
                if len(data) != info.size:
                    raise CorpusArchiveError(f"{where}: truncated")
                yield info.name, data
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorpusArchiveError(f"{archive.name}: not a readable tar ({type(exc).__name__}: {exc})") from None
    if len(seen) != pinned.manifest.files or total != pinned.manifest.bytes:
        raise CorpusArchiveError(f"{archive.name}: {len(seen)} files and {total:,} bytes; its manifest says "
                                 f"{pinned.manifest.files} and {pinned.manifest.bytes:,}")


def extract(pinned: Pinned, folder: Path) -> str:
    """Every member written under ``folder`` (an empty folder), read-only; returns the content
    fingerprint of what was written (:func:`content_fingerprint`), computed from the members as
    they are read. A member that cannot be written there is refused in one line."""
    if any(folder.iterdir()):
        raise CorpusArchiveError(f"{folder}: not empty; an archive is extracted into an empty folder")
    members = []
    for name, data in read_members(pinned):
        target = folder / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as f:  # "x": never through a file or link already there
                f.write(data)
        except OSError as exc:
            raise CorpusArchiveError(f"{pinned.archive.name}: member {name!r} cannot be written under {folder} "
                                     f"({type(exc).__name__}: {exc.strerror or exc})") from None
        os.chmod(target, 0o444)
        members.append((name, data))
    return content_fingerprint(members)


def content_fingerprint(members: Iterable[tuple[str, bytes]]) -> str:
    """suite.data.file_corpus's fingerprint of these (path, bytes), sorted by path as a folder's files are."""
    from suite.data.file_corpus import _digest

    digest = hashlib.sha256()
    for name, data in sorted(members):
        _digest(digest, name, data)
    return digest.hexdigest()[:16]


def tar_bytes(members: Iterable[tuple[str, bytes]]) -> bytes:
    """A deterministic tar of (name, bytes): sorted by name, mode 0644, owner and time zero."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(members):
            check_member_name(name)
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def write_archive(members: list[tuple[str, bytes]], path: Path) -> dict:
    """Write the deterministic, xz-compressed archive; returns the manifest fields it fixes."""
    raw = tar_bytes(members)
    path.write_bytes(lzma.compress(raw, format=lzma.FORMAT_XZ, preset=XZ_PRESET))
    return {"archive": path.name, "sha256": file_sha256(path), "tar_sha256": hashlib.sha256(raw).hexdigest(),
            "fingerprint": content_fingerprint(members), "files": len(members),
            "bytes": sum(len(d) for _, d in members)}


def write_manifest(path: Path, fields: dict) -> Pinned:
    """Write ``corpora/<name>-<version>.yaml`` (validated first) and read it back."""
    import yaml

    manifest = Manifest.model_validate(fields)
    path.write_text(yaml.safe_dump(manifest.model_dump(), sort_keys=False, width=100, allow_unicode=False))
    return read_manifest(path)
