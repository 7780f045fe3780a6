"""A corpus of bad inputs, each refused cleanly by the real command line.

Every file under tests/bad_inputs/{encodings,sizes,tasks,grids}/ is one bad input,
except the ``ok-*`` helpers (valid alone, named by the bad grids). A file's first lines
say what is expected of it::

    # expect: <text the error must contain>
    # args: --import        (optional: validate with these flags)
    # dos: true             (optional: hostile YAML, run in a subprocess of its own)

Inputs that cannot be committed as text (over the size limit, not UTF-8, control
bytes, things that are not files) are made by :data:`GENERATED`. Each input goes through
``posbench validate`` (and each grid also through ``posbench run``), in this process or,
for the hostile ones, in a subprocess: exit code 1, the file's name with a line number
and the expected reason on stderr, no traceback, and nothing written under results/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from suite.cli.main import main
from suite.core.yamldoc import MAX_BYTES, SpecErrors, read_yaml

from tests.conftest import REPO

CORPUS = Path(__file__).parents[1] / "bad_inputs"
KINDS = ("encodings", "sizes", "tasks", "grids")
PARSE_PEAK_BYTES = 32 * 2**20  # parsing alone: the largest refused input is MAX_BYTES (1 MiB) of text


@dataclass(frozen=True)
class Case:
    path: str  # relative to the project root, e.g. "encodings/alias-bomb.yaml"
    expect: str
    args: tuple = ()
    dos: bool = False


def header(path: Path) -> dict:
    """The ``# key: value`` lines at the top of a corpus file."""
    out = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"# (\w+): (.*)", line)
        if not match:
            break
        out[match[1]] = match[2]
    return out


def committed_cases() -> list[Case]:
    cases = []
    for kind in KINDS:
        for path in sorted((CORPUS / kind).glob("*.yaml")):
            if path.name.startswith("ok-"):
                continue
            h = header(path)
            cases.append(Case(f"{kind}/{path.name}", h["expect"], tuple(h.get("args", "").split()), h.get("dos") == "true"))
    return cases


# name -> (what to write, or None to write nothing, expected text, whether it is hostile)
GENERATED = {
    "encodings/huge-file.yaml": (lambda p: p.write_bytes(b"name: huge-file\ndescription: >\n" + b"  lots of words\n" * (MAX_BYTES // 15)),
                                 f"larger than {MAX_BYTES} bytes", True),
    "encodings/not-utf8.yaml": (lambda p: p.write_bytes(b"name: not-utf8\ndisplay_name: caf\xe9\n"), "not UTF-8 text (byte 0xe9", False),
    "encodings/utf16.yaml": (lambda p: p.write_bytes("name: utf16\n".encode("utf-16")), "not UTF-8 text", False),
    "encodings/nul-byte.yaml": (lambda p: p.write_bytes(b"name: nul-byte\ndisplay_name: a\x00b\n"), "control character U+0000", False),
    "encodings/escape-sequence.yaml": (lambda p: p.write_bytes(b"name: escape-sequence\ndisplay_name: \x1b[31mred\n"),
                                       "control character U+001B", False),
    "encodings/c1-control.yaml": (lambda p: p.write_text("name: c1-control\ndisplay_name: a\u0085b\n", encoding="utf-8"),
                                  "control character U+0085", False),
    "encodings/a-directory.yaml": (lambda p: p.mkdir(), "not a regular file", False),
    "grids/a-fifo.yaml": (lambda p: os.mkfifo(p), "not a regular file", True),  # reading it would block forever
    "grids/missing.yaml": (None, "no such file", False),
}


def generated_cases() -> list[Case]:
    return [Case(rel, expect, (), dos) for rel, (_, expect, dos) in GENERATED.items()]


CASES = committed_cases() + generated_cases()


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A project with the shipped specs, the corpus (bad inputs, helpers, plugins,
    corpora) and the generated inputs."""
    root = tmp_path_factory.mktemp("bad-project")
    for folder in KINDS:
        shutil.copytree(REPO / folder, root / folder)
    for folder in (*KINDS, "plugins", "corpora"):
        shutil.copytree(CORPUS / folder, root / folder, dirs_exist_ok=True)
    for rel, (make, _, _) in GENERATED.items():
        if make is not None:
            make(root / rel)
    return root


def refused(code: int, err: str, case: Case, root: Path) -> None:
    name = Path(case.path).name
    assert code == 1, err
    assert "Traceback" not in err, err
    assert re.search(re.escape(name) + r":\d+: ", err), f"no {name}:<line>: in\n{err}"
    assert case.expect in err, f"expected {case.expect!r} in\n{err}"
    assert not (root / "results").exists(), "something was written under results/"


def run_cli(root: Path, argv: list[str], case: Case, capsys) -> tuple[int, str]:
    if not case.dos:
        code = main(["--root", str(root), *argv])
        out = capsys.readouterr()
        return code, out.err + out.out
    # hostile input runs in its own process, so a regression that exhausts memory fails this
    # one case; how much the parse may take is test_hostile_yaml_is_refused_within_a_memory_bound's
    done = subprocess.run([sys.executable, "-m", "suite.cli.main", "--root", str(root), *argv], capture_output=True, text=True,
                          cwd=REPO)
    return done.returncode, done.stderr + done.stdout


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_validate_refuses_cleanly(case, root, capsys):
    code, err = run_cli(root, ["validate", *case.args, str(root / case.path)], case, capsys)
    refused(code, err, case, root)


GRID_CASES = [c for c in CASES if c.path.startswith("grids/")]


@pytest.mark.parametrize("case", GRID_CASES, ids=lambda c: c.path)
def test_run_refuses_before_training(case, root, capsys):
    """What validate refuses, run refuses too, before anything is trained or written."""
    code, err = run_cli(root, ["run", "--quiet", "--no-site", str(root / case.path)], case, capsys)
    refused(code, err, case, root)


@pytest.mark.parametrize("case", [c for c in CASES if c.dos and not c.path.startswith("grids/")], ids=lambda c: c.path)
def test_hostile_yaml_is_refused_within_a_memory_bound(case, root):
    """Parsing alone, bounded by memory, not by a clock (a machine shared with other work makes
    a timing flaky): a 400-byte alias bomb once took 21 s and 2.7 GB here; refused, the
    parse allocates at most a few MiB at its peak (tracemalloc counts bytes, whatever the load)."""
    tracemalloc.start()
    try:
        with pytest.raises(SpecErrors):
            read_yaml(root / case.path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PARSE_PEAK_BYTES


def test_validate_without_import_runs_no_plugin_code(root, capsys):
    """An external implementation is checked for its form only: the plugin that would
    exit the interpreter at import is never imported, and `this` prints no Zen."""
    assert main(["--root", str(root), "validate", str(root / "encodings" / "plugin-exits-at-import.yaml")]) == 0
    out = capsys.readouterr().out
    assert "params of plugin-exits-at-import not checked: run with --import" in out
    assert main(["--root", str(root), "validate", str(root / "encodings" / "randomized-inner-not-imported.yaml")]) == 1
    assert "Beautiful is better than ugly" not in capsys.readouterr().out


@pytest.mark.parametrize("path", sorted(p.relative_to(CORPUS) for kind in KINDS for p in (CORPUS / kind).glob("ok-*.yaml")),
                         ids=str)
def test_helpers_are_valid_alone(path, root, capsys):
    """The helpers named by the bad grids are fine on their own: the grid's checks refuse them."""
    assert main(["--root", str(root), "validate", str(root / path)]) == 0, capsys.readouterr().err


def test_the_corpus_covers_at_least_sixty_inputs():
    assert len(CASES) >= 60
    assert {Path(c.path).parts[0] for c in CASES} == set(KINDS)
