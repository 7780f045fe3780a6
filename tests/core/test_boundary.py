"""suite.core.boundary, property by property: what each allow-list lets through is safe where it
is used, and whatever it refuses is refused with one line. Hypothesis draws the names, paths,
options and texts a hostile contributor could send."""

from __future__ import annotations

import gzip
import json
import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from suite.core.boundary.bounded import Bounds, Refused, json_lines, read_json
from suite.core.boundary.names import is_name, name_problem
from suite.core.boundary.shell import SBATCH_EXTRA, sbatch_extra_problem
from suite.core.boundary.text import for_terminal, text_problem
from suite.execution.executors.slurm import Profile, sbatch_script

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
SHELL_BAIT = st.sampled_from(["\n", "\r", ";", "#", "$(", "`", "'", '"', " ", "\\", "&", "|", "\x1b", "\u202e", "\0"])
HOSTILE = st.lists(st.one_of(SHELL_BAIT, ANY_TEXT), min_size=1, max_size=6).map("".join)


# -- shell text ------------------------------------------------------------------------------


@FAST
@given(name=HOSTILE)
def test_a_name_is_a_single_safe_word_or_refused(name):
    if is_name(name):
        assert shlex.split(name) == [name] and "/" not in name and not name.startswith(("-", "."))
    else:
        assert name_problem(name)


@FAST
@given(root=HOSTILE, grid=HOSTILE)
def test_the_script_runs_no_word_it_was_not_written_with(tmp_path_factory, root, grid):
    """Whatever the project path and the grid's name hold, the script's shell lines are the
    script's own and each path is one word; or sbatch_script refuses (ValueError)."""
    base = tmp_path_factory.getbasetemp()
    root_path = base / root.replace("/", "_").replace("\0", "_")
    try:
        script = sbatch_script(Profile(), 2, root_path / "results" / "slurm" / "f", root_path / "m.json", root_path, grid)
    except ValueError:
        return
    lines = script.splitlines()
    shell = [line for line in lines if not line.startswith("#")]
    assert [line.split()[0] for line in shell] == ["set", "cd", *(["export"] * (len(shell) - 4)), "echo", "srun"]
    assert shlex.split(shell[1]) == ["cd", str(root_path)]
    assert all(line.startswith(("#SBATCH --", "#!/bin/bash", "# posbench: ")) for line in lines if line.startswith("#"))
    assert len([line for line in lines if line.startswith("# posbench: ")]) == 1


@FAST
@given(option=st.from_regex(r"--[a-z][a-z-]{0,20}", fullmatch=True), value=HOSTILE)
def test_an_extra_sbatch_option_is_on_the_allow_list_with_a_plain_value(option, value):
    line = f"{option}={value}"
    if sbatch_extra_problem(line) is None:
        assert option[2:] in SBATCH_EXTRA and "\n" not in value and "\r" not in value
        assert not any(ch in value for ch in "$`;'\"\\\x1b\0")


@pytest.mark.parametrize("line", ["--export=ALL,BASH_ENV=/tmp/x", "--chdir=/", "--output=/etc/cron.d/x",
                                  "--error=/tmp/e", "--get-user-env", "--uid=0", "--wrap=id", "--comment=x\necho",
                                  "--mem=1G\n#", "echo pwned"])
def test_the_options_a_red_team_tried_are_refused(line):
    assert sbatch_extra_problem(line)


# -- control characters ----------------------------------------------------------------------


@FAST
@given(text=HOSTILE)
def test_what_reaches_a_terminal_holds_no_control_or_bidi_character(text):
    shown = for_terminal(text)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069
                   for c in shown)
    if text_problem(text) is None:
        assert shown == text


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(HOSTILE, st.text(st.characters(max_codepoint=0x7F), max_size=80)), lines=st.booleans())
def test_stored_text_is_refused_exactly_when_one_of_its_characters_is(text, lines):
    """The check's shortcut for printable ASCII says what walking every character says."""
    from suite.core.boundary.text import _bad

    if len(text) <= 200:
        assert (text_problem(text, lines=lines) is None) == (not any(_bad(ch, lines) for ch in text))


def test_a_long_text_is_cut_with_a_note():
    shown = for_terminal("x" * 20_000_000, 100)
    assert shown.startswith("x" * 100) and shown.endswith("[... 19999900 more characters cut]")


# -- unbounded reads ---------------------------------------------------------------------------


def bomb(path: Path, line: bytes, megabytes: int) -> Path:
    """A gzip stream of ``megabytes`` MiB of ``line`` repeated: a few KB on disk."""
    chunk = line * ((1 << 20) // len(line))
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(megabytes):
            f.write(chunk)
    return path


BOUNDS = Bounds(bytes=4 << 20, line=1 << 16, records=1000, depth=8, string=100)


@pytest.mark.parametrize("line", [b"{}\n", b" " * 1000 + b"\n", b"[" * 1000 + b"\n", b'{"a": 1}\n'])
def test_a_gzip_bomb_is_refused_within_its_bounds(tmp_path, line):
    """Whatever the lines, the reader stops at the first bound it passes: records, bytes or line."""
    path = bomb(tmp_path / "b.jsonl.gz", line, 8)
    assert path.stat().st_size < 100_000
    with pytest.raises(Refused) as caught:
        for _ in json_lines(path, BOUNDS):
            pass
    assert any(s in str(caught.value) for s in ("more than 1000 records", "more than 4194304 bytes", "nested deeper"))


def test_a_line_without_end_is_refused_at_the_line_bound(tmp_path):
    path = bomb(tmp_path / "b.jsonl.gz", b"x", 8)
    with pytest.raises(Refused, match="line 1: longer than 65536 bytes"):
        list(json_lines(path, BOUNDS))


@FAST
@given(depth=st.integers(1, 40), length=st.integers(0, 300))
def test_nesting_and_strings_are_bounded(tmp_path_factory, depth, length):
    """``depth`` lists around a string of ``length`` characters."""
    value = "s" * length
    for _ in range(depth):
        value = [value]
    path = tmp_path_factory.mktemp("j") / "v.json"
    path.write_text(json.dumps(value))
    if depth > BOUNDS.depth or length > BOUNDS.string:
        with pytest.raises(Refused):
            read_json(path, BOUNDS)
    else:
        assert read_json(path, BOUNDS) == value


def test_a_fifo_or_a_link_is_refused_without_waiting(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(Refused, match="not a regular file"):
        read_json(tmp_path / "fifo.json")
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(Refused, match="a link"):
        read_json(tmp_path / "link.json")
