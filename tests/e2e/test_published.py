"""The published leaderboard: records of a grid written into a committed snapshot folder, and
the site rendered from it on a machine that trains nothing."""

from __future__ import annotations

import gzip
import json
import re
import shutil

from suite.cli.main import main
from suite.core.numerics import cpu_model

from tests.conftest import REPO
from tests.snapshot_cut import recorded_cpu

TASK_TRAIN = {"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1}
EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "task_examples": 4, "lmeval_rolling": False}


def test_a_published_snapshot_renders_the_site_without_training(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="pub", encodings=["nope", "rope"], tasks=["local", "flip_flop"], scales=[1, 2],
                     task_train=TASK_TRAIN, eval=EVAL)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    assert main(["--root", str(project_root), "publish", str(grid)]) == 0
    folder = project_root / "leaderboard"
    info = json.loads((folder / "SNAPSHOT.json").read_text())
    assert (info["grids"], info["training_runs"], info["evaluations"], info["pieces_missing"]) == (["pub"], 4, 8, 0)
    assert info["machine"]["cores"] and info["cpu_seconds"] > 0
    assert info["record_cpus"] == [cpu_model()]  # every record here was computed on this machine
    with gzip.open(folder / "evals.jsonl.gz", "rt") as f:
        evals = [json.loads(line) for line in f]
    assert sorted(e["eval_id"] for e in evals) == sorted(p.stem for p in (project_root / "results" / "evals").glob("*.json"))
    assert len(list((folder / "samples").glob("*.parquet"))) == 4  # the task evaluations' per-sample outputs
    first = {p.name: p.read_bytes() for p in folder.glob("*.gz")}
    assert main(["--root", str(project_root), "publish", str(grid)]) == 0
    assert {p.name: p.read_bytes() for p in folder.glob("*.gz")} == first  # the same records, the same bytes

    # a fresh checkout: the snapshot, no results, nothing trained; the site of one's own results stays
    own = {p: p.read_bytes() for p in (project_root / "site" / "_build").rglob("*") if p.is_file()}
    shutil.rmtree(project_root / "results")
    capsys.readouterr()
    assert main(["--root", str(project_root), "site", "--published"]) == 0
    assert {p: p.read_bytes() for p in (project_root / "site" / "_build").rglob("*") if p.is_file()} == own
    assert "published snapshot leaderboard/ (4 training runs, 8 evaluations" in capsys.readouterr().out
    assert not (project_root / "results").exists()  # rendered from a scratch copy, results/ untouched
    assert main(["--root", str(project_root), "leaderboard", "--published", "--board", "lm-tiny-local"]) == 0
    assert "Language modelling: local, size tiny" in capsys.readouterr().out  # the same boards in the terminal
    index = (project_root / "site" / "published" / "index.html").read_text()
    overview = index[index.index('id="overview"'):index.index('id="run"')]  # the first thing under the title
    assert "Best on language modelling at the longest length" in overview and "boards/lm-tiny-local.html" in overview
    assert 'id="snapshot"' in index and "the committed snapshot of pub" in index
    assert f"on {cpu_model()} (the CPUs its records name), published on " in index
    assert "Task flip_flop (acc)" in index
    assert len(list((project_root / "site" / "published" / "runs").glob("*.html"))) == 4
    assert "Published findings, re-tested" in (project_root / "site" / "published" / "findings.html").read_text()


def test_publish_whole_sizes_leaves_out_a_size_with_a_piece_missing_and_the_site_says_so(tiny_grid, project_root, capsys):
    """A size ladder is published rung by rung: with --whole-sizes a size goes in only with every
    piece of it recorded; SNAPSHOT.json and the site's header name the size left out."""
    grid = tiny_grid(name="rungs", encodings=["nope"], sizes=["tiny", "tiny-4l"], scales=[1, 2],
                     train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1}, eval=EVAL)
    root = ["--root", str(project_root)]
    assert main([*root, "run", str(grid), "--quiet", "--no-site"]) == 0
    evals = project_root / "results" / "evals"
    gap = next(p for p in sorted(evals.glob("*.json")) if json.loads(p.read_text())["size"] == "tiny-4l")
    gap.unlink()  # one evaluation of the larger size not recorded yet
    capsys.readouterr()
    assert main([*root, "publish", str(grid), "--whole-sizes"]) == 0
    assert f"{grid}: size tiny-4l left out, 1 of its pieces not recorded yet" in capsys.readouterr().out
    folder = project_root / "leaderboard"
    info = json.loads((folder / "SNAPSHOT.json").read_text())
    assert info["sizes_left_out"] == {"rungs": ["tiny-4l"]}
    assert (info["training_runs"], info["evaluations"], info["pieces_missing"]) == (1, 2, 0)
    with gzip.open(folder / "runs.jsonl.gz", "rt") as f:
        assert [json.loads(line)["size"] for line in f] == ["tiny"]  # the size's run goes out with it
    assert main([*root, "site", "--published"]) == 0
    index = (project_root / "site" / "published" / "index.html").read_text()
    assert "left out until every piece of them is computed: rungs at tiny-4l" in index

    assert main([*root, "publish", str(grid)]) == 0  # without it: what is recorded, the gap counted
    info = json.loads((folder / "SNAPSHOT.json").read_text())
    assert (info["training_runs"], info["evaluations"], info["pieces_missing"], info["sizes_left_out"]) == (2, 3, 1, {})

    # a rung still running, into a folder of its own (committed as it goes; `run --with-published` reads it back)
    assert main([*root, "publish", str(grid), "--size", "tiny-4l", "--out", "in-progress"]) == 0
    info = json.loads((project_root / "in-progress" / "SNAPSHOT.json").read_text())
    assert (info["training_runs"], info["evaluations"], info["pieces_missing"]) == (1, 1, 1)
    capsys.readouterr()
    assert main([*root, "publish", str(grid), "--size", "tiny-8l", "--out", "elsewhere"]) == 1
    assert f"--size 'tiny-8l' is not a size of {grid} (tiny, tiny-4l)" in capsys.readouterr().err
    assert not (project_root / "elsewhere").exists()


def test_verify_of_a_published_run_on_a_fresh_clone_reads_it_from_the_snapshot(tiny_grid, project_root, capsys):
    """A fresh clone has leaderboard/ and no results/: `verify RUN_ID` of a published run adds the
    snapshot's records first, then re-trains and re-evaluates it, bit for bit."""
    # a generated task: a folder corpus's path is part of its run's id and the snapshot shortens
    # machine paths, so a run on one cannot be verified from a snapshot yet (a known limitation)
    grid = tiny_grid(name="pub", encodings=["nope"], tasks=["flip_flop"], scales=[1, 2], task_train=TASK_TRAIN,
                     eval=EVAL)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    assert main(["--root", str(project_root), "publish", str(grid)]) == 0
    (run_id,) = [p.stem for p in (project_root / "results" / "runs").glob("*.json")]
    shutil.rmtree(project_root / "results")
    capsys.readouterr()
    assert main(["--root", str(project_root), "verify", run_id]) == 0
    out = capsys.readouterr().out
    assert "added the published snapshot's records first" in out
    assert re.search(r"^match: (\d+) of \1 figure\(s\) match, \1 bit for bit$", out, re.M), out


def test_site_published_without_a_snapshot_says_so(project_root, capsys):
    assert main(["--root", str(project_root), "site", "--published"]) == 1
    assert "no published snapshot" in capsys.readouterr().err


def board_ids(root) -> list[str]:
    from suite.report.leaderboard import build
    from suite.results.store import connect_readonly

    with connect_readonly(root / "results" / "posbench.duckdb") as con:
        return [b.id for b in build(con).all]


def test_a_new_encoding_trains_only_its_rows_beside_the_published_ones_and_is_submitted(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="pub", encodings=["nope", "rope"], scales=[1, 2], eval=EVAL)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    before = board_ids(project_root)
    assert main(["--root", str(project_root), "publish", str(grid)]) == 0
    shutil.rmtree(project_root / "results")  # a contributor's fresh checkout: the snapshot, no results
    spec = (project_root / "encodings" / "alibi.yaml").read_text()
    (project_root / "encodings" / "my-alibi.yaml").write_text(spec.replace("name: alibi", "name: my-alibi", 1))
    grid = tiny_grid(name="pub", encodings=["nope", "rope", "my-alibi"], scales=[1, 2], eval=EVAL)
    capsys.readouterr()
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--with-published"]) == 0
    out = capsys.readouterr().out
    assert "2 training run(s) and 4 evaluation(s) added to results/" in out
    assert out.count("trained in") == 1 and "run 1/1 my-alibi/tiny/local/seed0" in out  # only its own row trains
    assert board_ids(project_root) == before  # adding an encoding renames no board
    board = (project_root / "site" / "_build" / "boards" / "lm-tiny-local.html").read_text()
    rows = [row for row in board.split("<tr") if "encodings/" in row and "yours, not published" in row]
    assert rows and all("my-alibi" in row for row in rows)  # marked as the contributor's, the others not
    assert main(["--root", str(project_root), "submit", "my-alibi"]) == 1  # not every run of grids/quick.yaml
    assert "my-alibi lacks 20 of the 20 training runs of the standard grid grids/quick.yaml" in capsys.readouterr().err
    assert main(["--root", str(project_root), "submit", "my-alibi", "--grid", "pub"]) == 0  # a published grid, whole
    out = capsys.readouterr().out
    assert "1 training run(s), 2 evaluation(s); verify: reproduced" in out
    folder = project_root / "submissions" / "my-alibi"
    assert (folder / "encodings" / "my-alibi.yaml").read_text() == (project_root / "encodings" / "my-alibi.yaml").read_text()
    with gzip.open(folder / "records" / "runs.jsonl.gz", "rt") as f:
        assert [json.loads(line)["encoding"] for line in f] == ["my-alibi"]
    verdict = (folder / "verify.txt").read_text()
    assert "identical: final_train_loss" in verdict and verdict.strip().endswith("figure(s) match") and "MISMATCH" not in verdict
    assert main(["--root", str(project_root), "submit", "no-such"]) == 1


def test_every_published_run_id_is_still_the_id_of_its_run():
    """The snapshot's training runs, rebuilt from their records, hash to the ids they were
    published under: a new spec field (a size's ``init``) at its default changes no id."""
    from suite.plan.grid import TrainingRun

    with gzip.open(REPO / "leaderboard" / "runs.jsonl.gz", "rt") as f:
        records = [json.loads(line) for line in f]
    assert records
    changed = [r["run_id"] for r in records if TrainingRun.from_dict(r["run"]).run_id != r["run_id"]]
    assert changed == []


def test_every_seed_of_a_board_was_computed_on_one_cpu_model():
    """A board's statistics pair its rows seed by seed, and what computed a figure decides its
    bits under the pinned numerics (MKL's branch: docs/concepts/reproducibility.md). So every
    training run of one size, task and seed, and every evaluation of those runs, names one CPU
    model: a seed that mixed them would pair figures of an Intel and an AMD arithmetic. Different
    seeds may come from different CPUs. One model name covers several machine classes (`AMD EPYC`),
    and records made before they named their class share a seed with records of a named class on a
    few boards: those boards say so (suite.report.board_classes, tests/report/test_board_classes.py)."""
    with gzip.open(REPO / "leaderboard" / "runs.jsonl.gz", "rt") as f:
        runs = {r["run_id"]: r for r in map(json.loads, f)}
    with gzip.open(REPO / "leaderboard" / "evals.jsonl.gz", "rt") as f:
        evals = [json.loads(line) for line in f]
    cpus: dict[tuple, set] = {}
    for record, run in [*((r, r) for r in runs.values()), *((e, runs[e["run_id"]]) for e in evals)]:
        cpus.setdefault((run["size"], run["task"], run["seed"]), set()).add(recorded_cpu(record))
    assert len(cpus) > 1 and all(None not in named for named in cpus.values())
    assert {key: named for key, named in cpus.items() if len(named) > 1} == {}


def class_rows() -> list[str]:
    """The reproducibility page's rows for the snapshot's machine classes: the class each record
    names (suite.core.machine.label), with MKL's branch as far as recorded, and its counts."""
    from collections import Counter

    from suite.core import machine

    counts: dict[str, Counter] = {}
    with gzip.open(REPO / "leaderboard" / "runs.jsonl.gz", "rt") as f:
        runs = {r["run_id"]: r for r in map(json.loads, f)}
    for name in ("runs", "evals"):
        with gzip.open(REPO / "leaderboard" / f"{name}.jsonl.gz", "rt") as f:
            for line in f:
                record = json.loads(line)
                numerics = record["provenance"].get("numerics") or {}
                trained = runs[record["run_id"]]["provenance"]  # an evaluation ran where its run trained
                if (trained.get("device") or "cpu").startswith("cuda"):
                    key = (f"`{trained['device']} ({trained.get('precision')} training, fp32 evaluation), "
                           f"its host {machine.label(numerics)}` | the GPU's kernels, not MKL's")
                else:
                    mkl = (f"{numerics['mkl_branch']} in effect (its AUTO: {numerics['mkl_auto_branch']})"
                           if "mkl_branch" in numerics else "not recorded")
                    key = f"`{machine.label(numerics)}` | {mkl}"
                counts.setdefault(key, Counter())[name] += 1
    return [f"| {key} | {c['runs']:,} | {c['evals']:,} |" for key, c in sorted(counts.items())]


def test_the_reproducibility_page_names_the_machine_classes_of_the_published_records():
    page = (REPO / "docs" / "concepts" / "reproducibility.md").read_text()
    table = "\n".join(["| machine class the records name | MKL's branch | training runs | evaluations |",
                       "|---|---|---|---|", *class_rows()])
    assert table in page, table
