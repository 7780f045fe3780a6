"""Build ``corpora/python-stdlib-3.11.7.tar.xz`` and its manifest from a CPython 3.11.7 build.

The published runs trained on the standard library of one Python 3.11.7 build (pyenv's, from
source: 1,790 ``.py`` files, 31,525,224 bytes, fingerprint ``7b1317fbe41342ed``). No package on
PyPI holds those bytes (CPython's source tarball lacks the build's generated modules, and a
distribution's Python ships a subset), so the archive is made once from such a build and
committed. This script refuses any other standard library: the archive must hold exactly the
bytes the published run ids hash.

    python3 scripts/corpora/python_stdlib.py     # with python3 a CPython 3.11.7 built whole
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from suite.data.archive import CORPORA, write_archive, write_manifest  # noqa: E402
from suite.data.file_corpus import list_files  # noqa: E402

VERSION = "3.11.7"
FINGERPRINT = "7b1317fbe41342ed"  # what every published language-modelling run id holds
LICENCE_FILE = f"python-stdlib-{VERSION}.LICENSE.txt"


def main() -> int:
    root = Path(sysconfig.get_paths()["stdlib"])
    if sys.version.split()[0] != VERSION:
        print(f"this is Python {sys.version.split()[0]}; the pinned corpus is {VERSION}'s standard library", file=sys.stderr)
        return 1
    members = [(rel, path.read_bytes()) for rel, path in list_files(root, "**/*.py")]  # the stdlib source's listing
    name = f"python-stdlib-{VERSION}"
    fields = write_archive(members, CORPORA / f"{name}.tar.xz")
    if fields["fingerprint"] != FINGERPRINT:
        (CORPORA / f"{name}.tar.xz").unlink()
        print(f"{root}: fingerprint {fields['fingerprint']}, not the published {FINGERPRINT}: not the build the "
              "published runs read (a distribution's Python ships part of the standard library)", file=sys.stderr)
        return 1
    (CORPORA / LICENCE_FILE).write_bytes((root / "LICENSE.txt").read_bytes())
    pinned = write_manifest(CORPORA / f"{name}.yaml", {
        "name": "python-stdlib", "version": VERSION,
        "description": f"The .py files of CPython {VERSION}'s standard library (third-party packages excluded), "
                       "as the published language-modelling runs read them.",
        **fields,
        "licence": "PSF-2.0 (Python Software Foundation License Agreement, with CPython's earlier licences)",
        "licence_file": LICENCE_FILE,
        "built_by": f"scripts/corpora/python_stdlib.py from a CPython {VERSION} built from source (pyenv), "
                    "lib/python3.11/**/*.py",
    })
    print(f"{pinned.archive}: {fields['files']} files, {fields['bytes']:,} bytes, "
          f"{pinned.archive.stat().st_size:,} bytes compressed, fingerprint {fields['fingerprint']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
