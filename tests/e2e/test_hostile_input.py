"""Untrusted input, round 2 (issue #53): what a hostile contributor tried on a fresh clone, by
class, worst first. Each case runs the real command line on a real project and asserts that the
input is refused with one line on stderr and exit 1 (or, where the input is a local fault, one
line and a state the next run recovers from), that nothing is written outside the project
(the folder around it is listed before and after) and that nothing the project held is lost.
The boundary itself is tested property by property in tests/core/test_boundary.py. No case
trains: the records are written by hand (tests.e2e.test_hostile_records.make_project)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from suite.cli.main import main
from tests.conftest import REPO
from tests.e2e.test_hostile_records import make_project, tree


@pytest.fixture
def world(tmp_path: Path, text_folder: Path):
    """(the folder around the project, the project root, its grid), every piece recorded."""
    root = tmp_path / "project"
    grid = make_project(root, text_folder)
    return tmp_path, root, grid


def one_line(capsys, argv: list[str], *expected: str, code: int = 1) -> str:
    """``argv`` exits ``code`` with exactly one line on stderr that says each of ``expected``."""
    capsys.readouterr()
    assert main(argv) == code
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and all(e in err[0] for e in expected), err
    assert "Traceback" not in err[0]
    return err[0]


def cli(root: Path, *argv: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """``posbench`` in a process of its own (where a case could hang or kill it)."""
    return subprocess.run([sys.executable, "-m", "suite.cli.main", "--root", str(root), *argv], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"})


# -- 1. shell text from a file name or a path ---------------------------------------------------


def test_a_grid_whose_file_name_is_shell_text_is_refused_and_no_script_is_written(world, capsys):
    parent, root, grid = world
    name = "x\ntouch PWNED;#"
    data = yaml.safe_load(grid.read_text()) | {"name": name}
    evil = root / "grids" / f"{name}.yaml"
    evil.write_text(yaml.safe_dump(data))
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "validate", str(evil)], "name:", "is not a name")
    one_line(capsys, ["--root", str(root), "run", str(evil), "--executor", "slurm", "--dry-run"], "is not a name")
    assert tree(parent) == before and not list(parent.rglob("PWNED"))


@pytest.mark.parametrize("extra", ["--export=ALL,BASH_ENV=/tmp/x", "--chdir=/", "--output=/etc/cron.d/x"])
def test_an_sbatch_option_off_the_allow_list_is_refused(world, capsys, extra):
    parent, root, grid = world
    before = tree(parent)
    capsys.readouterr()
    assert main(["--root", str(root), "run", str(grid), "--executor", "slurm", f"--sbatch-extra={extra}",
                 "--dry-run"]) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--sbatch-extra" in errors[0] and "is not an option a profile may add" in errors[0]
    assert tree(parent) == before


def test_a_project_path_with_shell_text_is_one_quoted_word_of_the_script(tmp_path, text_folder, capsys):
    root = tmp_path / "it's $(touch PWNED) a;project"
    grid = make_project(root, text_folder)
    for d in ("runs", "evals"):  # work left, so a script is written
        shutil.rmtree(root / "results" / d)
    assert main(["--root", str(root), "run", str(grid), "--executor", "slurm", "--dry-run"]) == 0
    script = next((root / "results" / "slurm").glob("*/job.sbatch")).read_text()
    cd = next(line for line in script.splitlines() if line.startswith("cd "))
    assert shlex.split(cd) == ["cd", str(root)]
    output = next(line for line in script.splitlines() if line.startswith("#SBATCH --output="))
    assert shlex.split(output.removeprefix("#SBATCH "))[0].startswith(f"--output={root}/results/slurm/")
    done = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)  # parses, runs nothing
    assert done.returncode == 0 and not list(tmp_path.rglob("PWNED"))


# -- 2. code chosen by a record -------------------------------------------------------------------


def test_verify_refuses_a_record_that_names_code_before_importing_it(world, capsys):
    parent, root, _ = world
    marker = parent / "IMPORTED"
    evil = parent / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    path = next((root / "results" / "runs").glob("*.json"))
    record = json.loads(path.read_text())
    record["run"]["encoding"]["impl"] = f"{evil}:Evil"
    path.write_text(json.dumps(record))
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "verify", str(path)], "run.encoding.impl", "no spec of this project names")
    assert not marker.exists() and tree(parent) == before
    (root / "results" / "checkpoints").mkdir(parents=True)
    (root / "results" / "checkpoints" / f"{record['run_id']}.ckpt").write_bytes(b"not loaded")
    one_line(capsys, ["--root", str(root), "eval", record["run_id"], "--tasks", "copy"], "run.encoding.impl")
    assert not marker.exists()


def test_code_a_record_names_is_refused_by_the_registry_while_it_is_rebuilt(world):
    from suite.core.registry import NotImported
    from suite.encodings import ENCODINGS
    from suite.specs.project_code import project_code

    parent, root, _ = world
    (parent / "evil.py").write_text("raise SystemExit('ran')\n")
    with project_code(root), pytest.raises(NotImported, match="no spec of this project names"):
        ENCODINGS.get(f"{parent / 'evil.py'}:Evil")
    with project_code(root), pytest.raises(NotImported):
        ENCODINGS.get("antigravity:Fly")


# -- 3. unbounded reads ---------------------------------------------------------------------------


@pytest.fixture
def published(world):
    """The world after ``posbench publish`` and with its results gone, as a fresh checkout."""
    parent, root, grid = world
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    shutil.rmtree(root / "results")
    return parent, root, grid


def gzip_bomb(path: Path, line: bytes, megabytes: int) -> None:
    """``megabytes`` MiB of ``line`` in a gzip stream of a few KB, cut short at its end: a reader
    that reads the whole stream before it looks at a line says so, one that streams never gets there."""
    chunk = line * ((1 << 20) // len(line))
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(megabytes):
            f.write(chunk)
    path.write_bytes(path.read_bytes()[:-64])


@pytest.mark.parametrize("line, expected", [(b"{}\n", "line 1: no schema_version"),
                                            (b"x", "line 1: longer than 1048576 bytes")])
def test_a_gzip_bomb_is_refused_at_its_first_bad_line(world, capsys, line, expected):
    """64 MiB of ``{}`` lines (or of one endless line) in a 64 KB file: refused at the first line,
    never read to its (truncated) end."""
    parent, root, grid = world
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    assert main(["--root", str(root), "ingest"]) == 0
    gzip_bomb(root / "leaderboard" / "evals.jsonl.gz", line, 64)
    assert (root / "leaderboard" / "evals.jsonl.gz").stat().st_size < 200_000
    # the site of one's own results reads the snapshot's ids only to mark rows: a one-line warning
    capsys.readouterr()
    assert main(["--root", str(root), "site"]) == 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "warning:" in err[0] and "evals.jsonl.gz: line 1: " in err[0]
    shutil.rmtree(root / "results")
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "site", "--published"], "evals.jsonl.gz", expected)
    assert tree(parent) == before


def test_a_huge_string_in_a_record_is_refused(published, capsys):
    parent, root, _ = published
    path = root / "leaderboard" / "runs.jsonl.gz"
    records = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    records[0]["display_name"] = "A" * 20_000_000
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in records), compresslevel=1))
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "site", "--published"], "runs.jsonl.gz", "line 1: longer than")
    records[0]["display_name"] = "A" * 300_000
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in records)))
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "site", "--published"], "runs.jsonl.gz", "a string of 300000 characters")
    assert tree(parent) == before


def test_a_huge_display_name_in_a_spec_is_refused(world, capsys):
    _, root, _ = world
    spec = root / "encodings" / "rope.yaml"
    spec.write_text(re.sub(r"^display_name:.*$", f"display_name: {'A' * 100_000}", spec.read_text(), count=1,
                           flags=re.M))
    one_line(capsys, ["--root", str(root), "validate", str(spec)], "display_name", "100000 characters")


# -- 4. writes outside the project ------------------------------------------------------------------


def test_submit_refuses_a_submission_folder_that_is_a_link(world, capsys):
    parent, root, _ = world
    elsewhere = parent / "elsewhere"
    elsewhere.mkdir()
    (root / "submissions").mkdir()
    (root / "submissions" / "rope").symlink_to(elsewhere)
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "submit", "rope"], "submissions/rope", "a link")
    assert tree(parent) == before and not list(elsewhere.iterdir())


@pytest.mark.parametrize("name", ["runs.jsonl.gz", "SNAPSHOT.json"])
def test_a_snapshot_file_that_is_a_link_is_refused(published, capsys, name):
    parent, root, _ = published
    path = root / "leaderboard" / name
    outside = parent / f"outside-{name}"
    shutil.move(path, outside)
    path.symlink_to(outside)
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "site", "--published"], name, "a link")
    assert tree(parent) == before


@pytest.mark.parametrize("left_out", [{"g": "medium"}, {"g": ["x" * 201]}, {"g": ["../medium"]}, {"../g": ["medium"]},
                                      ["medium"], {"g": []}])
def test_a_snapshot_summary_naming_sizes_left_out_wrongly_is_refused(published, capsys, left_out):
    parent, root, _ = published
    path = root / "leaderboard" / "SNAPSHOT.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "sizes_left_out": left_out}))
    before = tree(parent)
    one_line(capsys, ["--root", str(root), "site", "--published"], "SNAPSHOT.json", "sizes_left_out")
    assert tree(parent) == before


# -- 5. non-atomic publish -------------------------------------------------------------------------


def test_a_publish_killed_part_way_leaves_the_old_snapshot_whole(world, capsys):
    """``publish`` is SIGKILLed at its first per-sample copy (before #53: after it had emptied
    ``samples/``): the snapshot that was there is whole and renders, and the next publish cleans up."""
    parent, root, grid = world
    assert main(["--root", str(root), "publish", str(grid)]) == 0

    def files() -> dict:
        return {str(p.relative_to(root)): p.read_bytes() for p in (root / "leaderboard").rglob("*") if p.is_file()}

    snapshot = files()
    code = ("import os, shutil, signal\n"
            "def killed(*args, **kwargs):\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "shutil.copyfile = killed\n"
            "from suite.cli.main import main\n"
            f"main(['--root', {str(root)!r}, 'publish', {str(grid)!r}])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == -9
    assert files() == snapshot
    assert main(["--root", str(root), "site", "--published"]) == 0
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    assert files().keys() == snapshot.keys()
    assert not [p for p in root.iterdir() if p.name.startswith(".leaderboard.publish-")]


# -- 6. figures that crash a render ---------------------------------------------------------------


def test_huge_and_not_finite_figures_render_as_gaps(published, capsys):
    """Bits per byte near the largest a run can give (4.9e38: float32's largest loss in bits; beyond
    1e39, or below 0, a figure is refused where its record is read: the last step here, and
    tests/e2e/test_hostile_records.py) and a NaN in a learning curve (JSON readers take ``NaN``):
    the site renders, the boards' means and spreads of such figures included, and a render leaves
    no staging folder behind."""
    parent, root, _ = published
    folder = root / "leaderboard"
    evals = [json.loads(x) for x in gzip.decompress((folder / "evals.jsonl.gz").read_bytes()).splitlines()]
    assert {m["metric"] for record in evals for m in record["metrics"]} <= {"bpb", "extrapolation_ratio"}
    for i, record in enumerate(evals):
        for m in record["metrics"]:
            m["value"] = 4.9e38 if i % 2 else 1e38
    (folder / "evals.jsonl.gz").write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in evals)))
    runs = [json.loads(x) for x in gzip.decompress((folder / "runs.jsonl.gz").read_bytes()).splitlines()]
    runs[0]["learning_curve"] = {"step": [1, 2, 3], "train_loss": [float("nan"), 1e308, 2.0]}
    (folder / "runs.jsonl.gz").write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in runs)))
    assert main(["--root", str(root), "site", "--published"]) == 0
    assert not [p for p in (root / "site").iterdir() if ".tmp-" in p.name]
    evals[0]["metrics"][0]["value"] = 1e308  # more than any run gives; a mean of two such overflowed
    (folder / "evals.jsonl.gz").write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in evals)))
    capsys.readouterr()
    assert main(["--root", str(root), "site", "--published"]) == 1
    assert "metrics.0.value: 1e+308 is outside what bpb can be ([0, 1e+39]" in capsys.readouterr().err


# -- 7. control characters -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["\\e]8;;http://x\\aclick\\e]8;;\\a", "\\u202eRoPE", "Ro\\0PE", "Ro\\bPE", "x\\ny"])
def test_a_display_name_with_a_control_character_is_refused(world, capsys, value):
    _, root, _ = world
    spec = root / "encodings" / "rope.yaml"
    text = "\n".join(line for line in spec.read_text().splitlines() if not line.startswith("display_name:"))
    spec.write_text(text + f'\ndisplay_name: "{value}"\n')
    one_line(capsys, ["--root", str(root), "validate", str(spec)], "display_name",
             "U+202E" if "202e" in value else "U+00")


def test_a_grid_description_with_esc_or_bel_is_refused(world, capsys):
    _, root, grid = world
    grid.write_text(grid.read_text() + 'description: "\\e[2J\\a"\n')
    one_line(capsys, ["--root", str(root), "validate", str(grid)], "description", "U+001B")


def test_a_record_with_an_escape_in_its_display_name_is_skipped_and_the_terminal_gets_none(world, capsys):
    _, root, _ = world
    path = next((root / "results" / "evals").glob("*.json"))
    record = json.loads(path.read_text())
    record["display_name"] = "\x1b]8;;http://evil\x07RoPE\x1b]8;;\x07"
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["--root", str(root), "ingest"]) == 0
    err = capsys.readouterr().err
    assert "display_name: character U+001B" in err and "\x1b" not in err and "\x07" not in err
    # a database some other writer filled: the leaderboard shows the sequence, never sends it
    import duckdb

    path.unlink()
    assert main(["--root", str(root), "ingest"]) == 0
    with duckdb.connect(str(root / "results" / "posbench.duckdb")) as con:
        con.execute("UPDATE evaluations SET display_name = ?", ["\x1b[31mRoPE\u202e\x08"])
        con.execute("UPDATE runs SET display_name = ?", ["\x1b[31mRoPE\u202e\x08"])
    for fmt in ("table", "csv", "markdown"):
        capsys.readouterr()
        assert main(["--root", str(root), "leaderboard", "--format", fmt, "--all"]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\u202e" not in out and "\x08" not in out, fmt
        assert "\\x1b" in out or fmt == "csv"  # CSV names encodings, not their display names


# -- 8. claims decided by clocks -------------------------------------------------------------------


def test_a_clock_that_runs_ahead_does_not_take_a_live_owners_claim(tmp_path, monkeypatch):
    """The owner is a live process on this host: its claim holds, however far the taker's clock runs."""
    import time

    from suite.execution import claims

    owner = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                              "from suite.execution.claims import try_claim\n"
                              f"c = try_claim(__import__('pathlib').Path({str(tmp_path)!r}), 'run-x')\n"
                              "print('held', flush=True)\ntime.sleep(120)\n"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "held"
        real = time.time
        monkeypatch.setattr(claims.time, "time", lambda: real() + 600)
        assert claims.try_claim(tmp_path, "run-x") is None
        assert claims.held_by_others(tmp_path, "run-x")
    finally:
        owner.kill()
        owner.wait()
    assert claims.try_claim(tmp_path, "run-x") is not None  # its owner gone: taken at once


def test_another_hosts_claim_is_judged_by_the_file_systems_clock(tmp_path, monkeypatch):
    import time

    from suite.execution import claims

    path = tmp_path / "run-y.json"
    path.write_text(json.dumps({"host": "another-node", "pid": 1, "token": "t"}))
    real = time.time
    monkeypatch.setattr(claims.time, "time", lambda: real() + 600)
    assert not claims.is_stale(path)  # a fresh heartbeat, whatever this process's clock says
    os.utime(path, (path.stat().st_mtime - 600, path.stat().st_mtime - 600))
    assert claims.is_stale(path)


# -- 9. local files that hang or trace back ---------------------------------------------------------


def test_a_fifo_named_like_a_claim_or_a_record_hangs_nothing(world):
    parent, root, _ = world
    os.mkfifo(root / "results" / "runs" / "0123456789abcdef.json")
    done = cli(root, "ingest", timeout=120)
    assert done.returncode == 0 and "not a regular file" in done.stderr and "Traceback" not in done.stderr
    claims_dir = root / "results" / "claims"
    claims_dir.mkdir()
    os.mkfifo(claims_dir / "run-a.json")
    (claims_dir / "run-b.json").mkdir()
    from suite.execution.claims import try_claim

    for name in ("run-a", "run-b"):  # a FIFO is opened without blocking: refused, never waited on
        claim = try_claim(claims_dir, name)
        assert claim is not None
        claim.release()
    assert len(list((root / "results" / "aside").glob("*run-*.reason"))) == 2  # set aside, not deleted


@pytest.mark.parametrize("argv, fault, expected", [
    (["ingest"], lambda r: (r / "results" / "posbench.duckdb").write_bytes(b"garbage" * 100), None),
    (["leaderboard"], lambda r: (r / "results" / "posbench.duckdb").write_bytes(b""), "not a usable database"),
    (["leaderboard"], lambda r: (r / "results" / "posbench.duckdb").write_bytes(b"garbage" * 100), "not a usable database"),
    (["new-encoding", "x" * 300, "--family", "rotary"], lambda r: None, "not a valid encoding name"),
    (["new-encoding", "fresh", "--family", "rotary"], lambda r: (r / "plugins").write_text("a file"), "plugins"),
    (["eval", "RUN", "--tasks", "copy", "--scales", "abc"], lambda r: None, None),
    (["run-one", "README", "0"], lambda r: (r / "README").write_text("not json"), "not a manifest"),
])
def test_a_local_fault_is_one_line(world, capsys, argv, fault, expected):
    parent, root, _ = world
    fault(root)
    if argv[0] == "eval":
        run_id = next((root / "results" / "runs").glob("*.json")).stem
        (root / "results" / "checkpoints").mkdir(parents=True)
        (root / "results" / "checkpoints" / f"{run_id}.ckpt").write_bytes(b"x")
        argv = ["eval", run_id, *argv[2:]]
        one_line(capsys, ["--root", str(root), *argv], "--scales", "'abc' is not a whole number")
        one_line(capsys, ["--root", str(root), *argv[:-1], "0,-1"], "--scales", "'0' is not a whole number")
        one_line(capsys, ["--root", str(root), *argv[:-2]], f"{run_id}.ckpt", "cannot be read")  # the 'x' checkpoint
        return
    if expected is None:  # the command recovers: a garbage database is built anew
        capsys.readouterr()
        assert main(["--root", str(root), *argv]) == 0
        assert main(["--root", str(root), "leaderboard"]) == 0
        return
    before = tree(parent)
    one_line(capsys, ["--root", str(root), *argv], expected)
    assert tree(parent) == before
    if argv[1:2] == ["fresh"]:  # nothing left behind that would block the retry
        (root / "plugins").unlink(missing_ok=True)
        assert main(["--root", str(root), *argv]) == 0


def test_results_aside_as_a_file_is_one_line_and_nothing_is_lost(world, capsys):
    """An evaluation to do on a run whose checkpoint is gone: its done record goes aside, and
    results/aside is a file: one line, exit 1, and the record is still there."""
    parent, root, grid = world
    results = root / "results"
    next((results / "evals").glob("*.json")).unlink()
    (results / "aside").write_text("a file where a folder belongs")
    runs = sorted(p.name for p in (results / "runs").glob("*.json"))
    capsys.readouterr()
    assert main(["--root", str(root), "run", str(grid), "--quiet", "--no-site"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "aside" in err[0] and "Traceback" not in err[0], err
    assert sorted(p.name for p in (results / "runs").glob("*.json")) == runs


def test_a_killed_ingests_database_and_wal_are_removed_by_the_next(world, capsys):
    _, root, _ = world
    results = root / "results"
    (results / ".tmp-999999-posbench.duckdb").write_bytes(b"half")
    (results / ".tmp-999999-posbench.duckdb.wal").write_bytes(b"log")
    assert main(["--root", str(root), "ingest"]) == 0
    assert not list(results.glob(".tmp-*"))


# -- 10. lost logs, false "done" ----------------------------------------------------------------------


def test_two_runs_at_once_write_separate_worker_logs(tmp_path):
    from suite.execution.executors.local import open_log

    first, second = open_log(tmp_path, 1), open_log(tmp_path, 1)
    try:
        assert first.name != second.name and Path(second.name).name == f"worker-1-{os.getpid()}.log"
    finally:
        first.close()
        second.close()
    assert Path(open_log(tmp_path, 1).name).name == "worker-1.log"  # free again once its worker is done


def test_a_done_evaluation_without_metrics_is_not_done(world):
    from suite.results.records import status_of

    _, root, _ = world
    path = next((root / "results" / "evals").glob("*.json"))
    record = json.loads(path.read_text())
    record["metrics"] = []
    path.write_text(json.dumps(record))
    assert status_of(path, "evaluation") == "todo"
