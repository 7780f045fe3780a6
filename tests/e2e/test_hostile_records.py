"""Records and snapshots written by strangers, each refused cleanly by the real command line.

A leaderboard that takes pull requests reads records it did not write. Each case here edits
one thing of a real snapshot (written by ``posbench publish`` from a small grid's records,
gzip JSON lines as the committed ``leaderboard/`` holds them) into what a red-team pass tried:
a path in an id or a name, an absolute ``samples``, ``javascript:`` where a link is built, a
schema this version does not know, a corrupt gzip stream or SNAPSHOT.json, a per-sample file
that is a link. ``posbench site --published`` and ``posbench run --with-published`` refuse each
with one line naming the file and what is wrong, exit 1, and write nothing, inside the project
or beside it: the folder around the project is listed before and after. No case trains: the
grid's records are written by hand, with the ids its plan gives.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from suite.cli.main import main
from suite.plan.evaluators import EVALUATORS
from suite.plan.grid import load_plan
from suite.results.machine_paths import ABSOLUTE, has_machine_path
from suite.results.record_checks import checkpoint_file, samples_file
from suite.results.record_types import EvaluationRecord, Provenance, TrainingProvenance, TrainingRecord
from suite.results.records import write_record
from suite.results.rows import MetricRow, SampleRow
from suite.results.samples import write_samples
from suite.specs import Project

from tests.conftest import REPO, write_yaml

EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
SAMPLE = SampleRow(task="local", scale=1, eval_len=32, metric="acc", doc_id=0, prompt_hash="h", target="t", correct=1.0)


def make_project(root: Path, text_folder: Path) -> Path:
    """A project with the shipped specs and a grid (RoPE and YaRN on its checkpoint, two scales)
    whose every piece has a record written by hand: a grid with nothing left to train."""
    for folder in ("encodings", "sizes", "tasks", "grids"):
        shutil.copytree(REPO / folder, root / folder)
    write_yaml(root / "tasks" / "local.yaml",
               {"name": "local", "kind": "lm", "corpus": {"kind": "folder", "path": str(text_folder), "glob": "*.py"}})
    grid = write_yaml(root / "grids" / "hostile.yaml",
                      {"name": "hostile", "encodings": ["rope", "yarn"], "sizes": ["tiny"], "tasks": ["local"],
                       "seeds": [0], "scales": [1, 2], "train": {"steps": 20, "batch_size": 4, "seq_len": 32},
                       "eval": EVAL})
    write_results(Project(root), grid, text_folder)
    return grid


def write_results(project: Project, grid: Path, text_folder: Path) -> None:
    _, plan = load_plan(grid, project)
    for run in plan.runs:
        write_record(TrainingRecord(
            run_id=run.run_id, run=run.to_dict(), content=run.content(), encoding=run.encoding.name,
            display_name=run.encoding.display_name, family=run.encoding.family, size=run.size.name, task=run.task.name,
            seed=run.seed, status="done", checkpoint=checkpoint_file(run.run_id), lineage=run.lineage(),
            provenance=TrainingProvenance(wall_s=2.0, finished_at="2026-11-20T10:00:00+00:00", final_train_loss=2.0,
                                          corpus=f"folder {text_folder} (60 files)")), project.runs)
    for i, e in enumerate(plan.evaluations):
        samples = None
        if i == 0:  # one evaluation with per-sample outputs, as a task evaluation has
            write_samples(project.samples / f"{e.eval_id}.parquet", [SAMPLE])
            samples = samples_file(e.eval_id)
        write_record(EvaluationRecord(
            eval_id=e.eval_id, run_id=e.run.run_id, evaluation=e.to_dict(), content=e.content(), evaluator=e.evaluator,
            settings=e.settings, scale=e.scale, encoding=e.encoding.name, display_name=e.encoding.display_name,
            family=e.encoding.family, paper=e.encoding.paper, trained_as=e.run.encoding.name,
            checkpoint_level=not EVALUATORS.get(e.evaluator).uses_eval_encoding, size=e.run.size.name,
            task=e.run.task.name, seed=e.run.seed, status="done", samples=samples,
            metrics=(MetricRow("local", "bpb", 3.0 - 0.1 * i, 100, scale=e.scale, eval_len=32 * e.scale, stderr=0.01),),
            provenance=Provenance(wall_s=1.0, finished_at="2026-11-21T10:00:00+00:00")), project.evals)


@pytest.fixture(scope="module")
def published_project(tmp_path_factory, text_folder: Path) -> Path:
    """A project that has published its grid's records into leaderboard/ and then lost its
    results/, as a fresh checkout has: made once, copied for each test (:func:`world`)."""
    root = tmp_path_factory.mktemp("hostile") / "project"
    grid = make_project(root, text_folder)
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    shutil.rmtree(root / "results")
    return root


@pytest.fixture
def world(tmp_path: Path, published_project: Path, monkeypatch):
    """(the folder around the project, the project root, its grid): a copy of the published
    project of its own. The temporary folders a command makes (``site --published`` builds its
    database in one) lie in the folder around the project too, so that a file escaping from them
    is seen."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = tmp_path / "project"
    shutil.copytree(published_project, root, symlinks=True)
    return tmp_path, root, root / "grids" / "hostile.yaml"


def tree(folder: Path) -> dict[str, int]:
    """Every file, folder and link under ``folder`` (its size, or -1), to compare before and after;
    but for the compile cache torch makes in the temporary folder the first time it is imported."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            key = str(path.relative_to(folder))
            if not key.startswith("tmp/torchinductor_"):
                out[key] = -1 if path.is_dir() or path.is_symlink() else path.stat().st_size
    return out


def lines(folder: Path, name: str) -> list[dict]:
    with gzip.open(folder / name, "rt") as f:
        return [json.loads(line) for line in f]


def rewrite(folder: Path, name: str, records: list[dict]) -> None:
    with gzip.open(folder / name, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def edit_first(name: str, change):
    """An edit of the snapshot: ``change`` applied to the first record of ``name`` (the first with
    per-sample outputs, for the evaluations)."""
    def apply(folder: Path, parent: Path) -> None:
        records = lines(folder, name)
        target = next((r for r in records if "samples" in r), records[0]) if name == "evals.jsonl.gz" else records[0]
        change(target, parent)
        rewrite(folder, name, records)
    return apply


def corrupt(name: str, data):
    def apply(folder: Path, parent: Path) -> None:
        path = folder / name
        path.write_bytes(data(path.read_bytes()) if callable(data) else data)
    return apply


def append_first(name: str):
    """The first record of ``name`` again at its end (its copy could say anything: refused)."""
    def apply(folder: Path, parent: Path) -> None:
        records = lines(folder, name)
        rewrite(folder, name, records + records[:1])
    return apply


def link_samples(folder: Path, parent: Path) -> None:
    """The per-sample file replaced by a link to a file of the reader's machine."""
    (parent / "secret.txt").write_text("a private key")
    target = next((folder / "samples").glob("*.parquet"))
    target.unlink()
    target.symlink_to(parent / "secret.txt")


def edit_info(change):
    """SNAPSHOT.json with ``change`` applied to it."""
    def apply(folder: Path, parent: Path) -> None:
        info = json.loads((folder / "SNAPSHOT.json").read_text())
        change(info)
        (folder / "SNAPSHOT.json").write_text(json.dumps(info))
    return apply


def sample_bomb(folder: Path, parent: Path) -> None:
    """The per-sample file replaced by one of a few kilobytes that holds 800 MB of text: one value
    of 2,000,000 characters on each of 400 rows, which Parquet's dictionary stores once."""
    import duckdb

    target = next((folder / "samples").glob("*.parquet"))
    bomb = parent / "bomb.parquet"
    duckdb.sql(f"COPY (SELECT * REPLACE (repeat('A', 2000000) AS target) FROM read_parquet('{target}'), range(400)) "
               f"TO '{bomb}' (FORMAT parquet, COMPRESSION zstd)")
    shutil.move(bomb, target)


def link_beside(folder: Path, parent: Path) -> None:
    """A file of the snapshot that is a link to a file of the reader's machine (read by nothing but
    the cache's key, which hashes every file)."""
    (parent / "secret.txt").write_text("a private key")
    (folder / "notes.txt").symlink_to(parent / "secret.txt")


# case -> (the edit, the file the error names, what it says)
CASES = {
    "run_id traversal": (edit_first("runs.jsonl.gz", lambda r, p: r.update(run_id="../../../ESC-run")),
                         "runs.jsonl.gz", "run_id: '../../../ESC-run' is not an id"),
    "eval_id traversal": (edit_first("evals.jsonl.gz", lambda r, p: r.update(eval_id="../../../ESC-eval")),
                          "evals.jsonl.gz", "eval_id: '../../../ESC-eval' is not an id"),
    "encoding traversal": (edit_first("evals.jsonl.gz", lambda r, p: r.update(encoding="../../../../X")),
                           "evals.jsonl.gz", "encoding: '../../../../X' is not a spec name"),
    "run encoding traversal": (edit_first("runs.jsonl.gz", lambda r, p: r.update(encoding="../../../../X")),
                               "runs.jsonl.gz", "encoding: '../../../../X' is not a spec name"),
    "absolute samples": (edit_first("evals.jsonl.gz", lambda r, p: r.update(samples=str(p / "ESC.sh"))),
                         "evals.jsonl.gz", "samples: '/"),
    "absolute checkpoint": (edit_first("runs.jsonl.gz", lambda r, p: r.update(checkpoint=str(p / "ESC.ckpt"))),
                            "runs.jsonl.gz", "checkpoint: '/"),
    "javascript trained_as": (edit_first("evals.jsonl.gz", lambda r, p: r.update(trained_as="javascript:alert(1)")),
                              "evals.jsonl.gz", "trained_as: 'javascript:alert(1)' is not a spec name"),
    "javascript parent_run_id": (edit_first("runs.jsonl.gz", lambda r, p: r.update(
        lineage={"parent_run_id": "javascript:alert(1)", "parent_label": "x", "steps": 1})),
        "runs.jsonl.gz", "lineage.parent_run_id: 'javascript:alert(1)' is not a run id"),
    "future schema_version": (edit_first("evals.jsonl.gz", lambda r, p: r.update(schema_version=3)),
                              "evals.jsonl.gz", "schema version 3, newer than this posbench's (2)"),
    "missing schema_version": (edit_first("runs.jsonl.gz", lambda r, p: r.pop("schema_version")),
                               "runs.jsonl.gz", "no schema_version"),
    "unknown key": (edit_first("runs.jsonl.gz", lambda r, p: r.update(upload_to="http://x")),
                    "runs.jsonl.gz", "upload_to: a key this posbench does not know"),
    "truncated gzip": (corrupt("evals.jsonl.gz", lambda b: b[: len(b) // 2]), "evals.jsonl.gz", "not a readable gzip stream"),
    "not gzip": (corrupt("runs.jsonl.gz", b"{\"run_id\": 1}\n"), "runs.jsonl.gz", "not a readable gzip stream"),
    "not JSON lines": (corrupt("runs.jsonl.gz", gzip.compress(b"{not json\n")), "runs.jsonl.gz", "line 1: not a JSON record"),
    "corrupt SNAPSHOT.json": (corrupt("SNAPSHOT.json", b"{\"grids\": [\"x\""), "SNAPSHOT.json", "not valid JSON"),
    "SNAPSHOT.json of the wrong types": (corrupt("SNAPSHOT.json", b"{\"cpu_seconds\": \"lots\"}"), "SNAPSHOT.json",
                                         "cpu_seconds: "),
    "an id twice": (append_first("evals.jsonl.gz"), "evals.jsonl.gz", "twice (line 1 too)"),
    "samples a link": (link_samples, ".parquet", "a link, not a file"),
    "samples missing": (lambda folder, parent: next((folder / "samples").glob("*.parquet")).unlink(), ".parquet",
                        "missing: evaluation"),
    # replicate plans the grids SNAPSHOT.json names, from grids/<name>.yaml: a path there would plan
    # (and import the evaluators of) a grid file of the snapshot's choosing
    "grid name a path": (edit_info(lambda info: info.update(grids=["../leaderboard/evil"])), "SNAPSHOT.json",
                         "grids.0: '../leaderboard/evil' is not a name"),
    "negative hours of work in SNAPSHOT.json": (edit_info(lambda info: info.update(cpu_seconds=-3600.0)),
                                                "SNAPSHOT.json", "cpu_seconds: Input should be greater than or equal to 0"),
    "a machine of -4 cores": (edit_info(lambda info: info.update(machine={"cores": -4})), "SNAPSHOT.json",
                              "machine.cores: Input should be greater than 0"),
    "control character in SNAPSHOT.json": (edit_info(lambda info: info.update(record_cpus=["AMD\u202eEPYC"])),
                                           "SNAPSHOT.json", "record_cpus.0: character U+202E"),
    "control character in a figure's source": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(
        source="lm-eval\u001b[2J")), "evals.jsonl.gz", "metrics.0.source: character U+001B"),
    "a task name that is not one": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(
        task="lm\u202etxt.exe")), "evals.jsonl.gz", "metrics.0.task: character U+202E"),
    "control character in provenance": (edit_first("runs.jsonl.gz", lambda r, p: r["provenance"].update(
        git_commit="0123abc\u0007")), "runs.jsonl.gz", "provenance.git_commit: character U+0007"),
    "a seed beyond 64 bits": (edit_first("runs.jsonl.gz", lambda r, p: r.update(seed=2 ** 63)), "runs.jsonl.gz",
                              "does not fit a 64-bit integer"),
    "per-sample dictionary bomb": (sample_bomb, ".parquet", "a value of 2,000,000 characters"),
    "a figure's length beyond 64 bits": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(
        eval_len=2 ** 63)), "evals.jsonl.gz", "metrics.0.eval_len: 9223372036854775808 does not fit a 64-bit integer"),
    "a learning curve's name that reorders": (edit_first("runs.jsonl.gz", lambda r, p: r.update(
        learning_curve={"ZQ3\u202e": [1.0]})), "runs.jsonl.gz", "learning_curve.key 'ZQ3\\u202e': character U+202E"),
    "a link beside the records": (link_beside, "notes.txt", "a link, not a file of the snapshot's own"),
    # an accuracy of 6.25 took a board's binomial arithmetic to "math domain error" (replicate's only line)
    "a figure outside what its metric can be": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(
        value=-6.25)), "evals.jsonl.gz", "metrics.0.value: -6.25 is outside what"),
    "a figure's count below 0": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(n=-40)),
                                 "evals.jsonl.gz", "metrics.0.n: -40 is not a count"),
    # a board takes the first chance it finds for all its rows: 5.0 left every row "at chance", unranked
    "a chance above 1": (edit_first("evals.jsonl.gz", lambda r, p: r["metrics"][0].update(chance=5.0)),
                         "evals.jsonl.gz", "metrics.0.chance: 5.0 is not a share"),
    # a training length of 0 took the plots' log2 to "math domain error"; one of 2**31 the database's cast
    "a training length of 0": (edit_first("runs.jsonl.gz", lambda r, p: r["run"]["train"].update(seq_len=0)),
                               "runs.jsonl.gz", "run.train.seq_len: 0 is not a count between 1 and 2**31 - 1"),
    "a learning rate that is text": (edit_first("runs.jsonl.gz", lambda r, p: r["run"]["train"].update(lr="fast")),
                                     "runs.jsonl.gz", "run.train.lr: 'fast' is not a learning rate"),
    # a run page formats one loss per step: a shorter series ended its render in a TypeError
    "a learning curve shorter than its steps": (edit_first("runs.jsonl.gz", lambda r, p: r.update(
        learning_curve={"step": [10, 20], "train_loss": [2.0]})), "runs.jsonl.gz",
        "learning_curve.train_loss: 1 values for 2 steps"),
    "a validation loss below 0": (edit_first("runs.jsonl.gz", lambda r, p: r.update(
        learning_curve={"step": [10, 20], "val_loss": [2.0, -1.0]})), "runs.jsonl.gz",
        "learning_curve.val_loss: a loss below 0"),
    "negative hours of work": (edit_first("runs.jsonl.gz", lambda r, p: r["provenance"].update(wall_s=-3600.0)),
                               "runs.jsonl.gz", "provenance.wall_s: -3600.0 is not a finite amount at least 0"),
    # positions of 2**62 passed the 64-bit check, and their sum overflowed in the database
    "a curve position beyond 32 bits": (edit_first("evals.jsonl.gz", lambda r, p: r.update(curves=[
        {"task": "local", "scale": 1, "eval_len": 32, "bucket": 0, "pos_start": 2 ** 62, "pos_end": 2 ** 62 + 8,
         "value": 3.0, "n": 1}])), "evals.jsonl.gz", "curves.0.pos_start: 4611686018427387904 is not between 0"),
}


def refused(capsys, argv: list[str], parent: Path, file: str, expected: str) -> None:
    """``argv`` exits 1 with one line on stderr naming ``file`` and saying ``expected``, and
    changes nothing under ``parent`` (the project included)."""
    before = tree(parent)
    capsys.readouterr()
    assert main(argv) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and file in err[0] and expected in err[0], err
    assert "Traceback" not in err[0]
    assert tree(parent) == before


@pytest.mark.parametrize("case", CASES)
def test_site_published_refuses_a_hostile_snapshot_and_writes_nothing(world, capsys, case):
    parent, root, _ = world
    edit, file, expected = CASES[case]
    edit(root / "leaderboard", parent)
    refused(capsys, ["--root", str(root), "site", "--published"], parent, file, expected)
    assert not (root / "site").exists()


@pytest.mark.parametrize("case", ["run_id traversal", "absolute samples", "javascript trained_as", "unknown key",
                                  "truncated gzip", "corrupt SNAPSHOT.json", "samples a link"])
def test_run_with_published_refuses_a_hostile_snapshot_and_writes_nothing(world, capsys, case):
    parent, root, grid = world
    edit, file, expected = CASES[case]
    edit(root / "leaderboard", parent)
    refused(capsys, ["--root", str(root), "run", str(grid), "--quiet", "--with-published"], parent, file, expected)
    assert not (root / "results").exists()


def test_a_real_process_refuses_with_one_line_and_no_traceback(world):
    parent, root, _ = world
    CASES["run_id traversal"][0](root / "leaderboard", parent)
    before = tree(parent)
    done = subprocess.run([sys.executable, "-m", "suite.cli.main", "--root", str(root), "site", "--published"],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"}, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "is not an id" in done.stderr and "Traceback" not in done.stderr
    assert tree(parent) == before


def test_a_link_at_the_published_cache_is_refused_and_nothing_is_written_or_deleted_through_it(world, capsys):
    """``.cache/published`` is written and its old files deleted: a link there (a clone can hold
    one) would have a render delete the files of the folder it points at."""
    parent, root, _ = world
    victim = parent / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    (root / ".cache").mkdir()
    (root / ".cache" / "published").symlink_to(victim)
    refused(capsys, ["--root", str(root), "site", "--published"], parent, ".cache/published", "is a link")
    assert [p.name for p in victim.iterdir()] == ["thesis.tex"]


def test_replicate_plans_no_grid_file_the_snapshot_names_by_a_path(world, capsys):
    parent, root, _ = world
    CASES["grid name a path"][0](root / "leaderboard", parent)
    refused(capsys, ["--root", str(root), "replicate", "--sample", "1"], parent, "SNAPSHOT.json",
            "grids.0: '../leaderboard/evil' is not a name")


def test_verify_reads_no_data_folder_a_record_names_outside_the_project(world, capsys):
    """A folder corpus's path is left out of a run's id (suite.plan.grid.task_content), and an id
    is no check anyway (whoever edits a record hashes it again): verify refuses a record whose run
    reads a folder where no task file of the project may, before it reads anything."""
    parent, root, _ = world
    victim = parent / "home"
    victim.mkdir()
    (victim / "id_rsa").write_text("a private key")
    with gzip.open(root / "leaderboard" / "runs.jsonl.gz", "rt") as f:
        record = json.loads(f.readline())
    record["run"]["task"]["corpus"] = {"kind": "folder", "path": str(victim), "glob": "**/*"}
    (root / "results" / "runs").mkdir(parents=True)
    path = root / "results" / "runs" / f"{record['run_id']}.json"
    path.write_text(json.dumps(record))
    refused(capsys, ["--root", str(root), "verify", str(path), "--no-evals"], parent, str(path),
            f"run.task.corpus.path: {victim} is outside the project")


def test_the_sound_snapshot_renders_and_nothing_it_publishes_holds_a_machine_path(world, text_folder, capsys):
    """The control: the unedited snapshot renders; what leaves the machine (the snapshot's files,
    the site's pages and downloads) names no absolute path, not even the folder corpus's."""
    parent, root, _ = world
    folder = root / "leaderboard"
    published = [gzip.decompress(p.read_bytes()).decode() for p in folder.glob("*.gz")] + [(folder / "SNAPSHOT.json").read_text()]
    assert all(not has_machine_path(text) for text in published)
    assert "encodings/rope.yaml" in published[0] + published[1]  # encoding_source, from its project folder
    before = tree(parent)
    assert main(["--root", str(root), "site", "--published"]) == 0
    new = set(tree(parent)) - set(before)
    # only the site and the snapshot's cached database (suite.results.snapshot_cache), inside the project
    assert new and all(Path(p).parts[:2] in {("project", "site"), ("project", ".cache")} for p in new)
    site = root / "site" / "published"
    for path in site.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert str(parent).encode() not in data and str(text_folder).encode() not in data, path
    for path in [*site.glob("data/*.csv"), site / "data" / "leaderboard.json"]:
        assert not has_machine_path(path.read_text()), path


def test_run_and_site_of_ones_own_results_need_no_sound_snapshot(tmp_path, text_folder, capsys):
    """A corrupt leaderboard/ is a one-line warning where a command does not need it: the end of
    every run and the site of one's own results still render."""
    root = tmp_path / "project"
    grid = make_project(root, text_folder)
    (root / "leaderboard").mkdir()
    (root / "leaderboard" / "SNAPSHOT.json").write_text("{}")
    (root / "leaderboard" / "evals.jsonl.gz").write_bytes(b"not gzip")
    capsys.readouterr()
    assert main(["--root", str(root), "run", str(grid), "--quiet"]) == 0  # nothing to train: ingest, render
    err = capsys.readouterr().err
    assert err.count("warning: ") == 1 and "evals.jsonl.gz: not a readable gzip stream" in err and "Traceback" not in err
    assert (root / "site" / "_build" / "index.html").is_file()
    assert main(["--root", str(root), "site"]) == 0
    assert capsys.readouterr().err.count("warning: ") == 1


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d.update(schema_version=3), "schema version 3, newer than this posbench's (2)"),
    (lambda d: d.update(uploaded_by="someone"), "uploaded_by: a key this posbench does not know"),
])
def test_a_record_of_a_later_version_in_results_is_never_overwritten(tmp_path, text_folder, capsys, edit, expected):
    """Before, an unreadable record counted as missing and was redone over: one a later posbench
    wrote is refused instead, naming it, and kept as it is."""
    root = tmp_path / "project"
    grid = make_project(root, text_folder)
    victim = sorted((root / "results" / "runs").glob("*.json"))[0]
    data = json.loads(victim.read_text())
    edit(data)
    victim.write_text(json.dumps(data))
    kept = victim.read_bytes()
    capsys.readouterr()
    assert main(["--root", str(root), "run", str(grid), "--quiet"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and victim.name in err[0] and expected in err[0], err
    assert victim.read_bytes() == kept
    assert main(["--root", str(root), "plan", str(grid)]) == 1


def test_a_quote_in_the_project_path_renders_the_site(tmp_path, text_folder, capsys):
    """Paths are values, never spliced into SQL: a folder named with a quote ingests, renders its
    downloads and publishes."""
    root = tmp_path / "it's a project"
    grid = make_project(root, text_folder)
    assert main(["--root", str(root), "ingest"]) == 0
    assert main(["--root", str(root), "site"]) == 0
    data = root / "site" / "_build" / "data"
    assert {p.name for p in data.iterdir()} >= {"runs.csv.gz", "runs.parquet", "samples.parquet", "leaderboard.json"}
    read = lambda name: gzip.decompress((data / name).read_bytes()).decode()  # noqa: E731
    assert read("runs.csv.gz").startswith("run_id,") and "doc_id" in read("samples.csv.gz")
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    write_samples(root / "results" / "samples" / "0123456789abcdef.parquet", [SAMPLE])  # the runner's writer too


def test_the_committed_snapshot_holds_no_machine_path():
    """What the repository publishes: no absolute path of the machine that computed it (fails
    until leaderboard/ is published again by a posbench that strips them)."""
    folder = REPO / "leaderboard"
    for path in [*folder.glob("*.gz"), folder / "SNAPSHOT.json"]:
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
        found = [ABSOLUTE.search(line).group(0) for line in text.splitlines() if has_machine_path(line)]
        assert not found, f"{path.name}: {len(found)} line(s) with an absolute path, e.g. {found[0]}"


def test_every_committed_record_passes_the_checks_every_reader_makes():
    from suite.results.snapshot_files import EVALS, RUNS, read_info, read_records

    folder = REPO / "leaderboard"
    read_info(folder)
    assert read_records(folder / RUNS, "training_run") and read_records(folder / EVALS, "evaluation")
