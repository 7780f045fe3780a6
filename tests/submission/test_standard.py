"""`posbench submit` bundles a submission only when the records hold every run of the standard
grid with the encoding in it (suite.submission.standard): a smoke run is refused, in one line
naming what is missing, and nothing is written."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from suite.cli.main import main
from suite.plan.grid import TrainingRun
from suite.specs import Project
from suite.submission.standard import NotStandard, _cells, check_standard
from tests.conftest import REPO
from tests.snapshot_cut import planned_by, published_runs

EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}


def test_missing_cells_are_named_by_size_task_and_seed_ranges():
    cells = [("tiny", "lm", s) for s in (1, 2, 3, 5, 7, 8)] + [("tiny", "flip_flop", s) for s in range(10)]
    assert _cells(cells) == "tiny/lm/seed1-3,5,7-8, tiny/flip_flop/seed0-9"


def published_alibi() -> list[SimpleNamespace]:
    """ALiBi's done training records of the published snapshot (every run of grids/quick.yaml among
    them), with the fields check_standard reads."""
    return [SimpleNamespace(**{k: r[k] for k in ("run_id", "encoding", "size", "task", "seed", "run")})
            for r in published_runs() if r["encoding"] == "alibi" and r["status"] == "done"]


def test_the_published_runs_of_an_encoding_hold_the_standard_grid():
    check_standard(Project(REPO), "alibi", published_alibi(), [])


def test_a_run_on_another_corpus_is_not_a_run_of_the_standard_grid():
    """The same size, task, seed and recipe, trained on other bytes (another data fingerprint):
    another run, with another id, so not the standard grid's (the board would compare it with
    runs on the published corpus)."""
    runs = published_alibi()
    standard = planned_by("quick")  # the standard grid's own run, not another grid's at the same seed
    i = next(i for i, r in enumerate(runs) if (r.size, r.task, r.seed) == ("tiny", "lm", 3) and standard(vars(r)))
    other = TrainingRun.from_dict({**runs[i].run, "data_fingerprint": "0123456789abcdef"})
    runs[i] = SimpleNamespace(**{**vars(runs[i]), "run_id": other.run_id,
                                 "run": {**runs[i].run, "data_fingerprint": "0123456789abcdef"}})
    with pytest.raises(NotStandard, match=r"^alibi lacks 1 of the 20 training runs of the standard grid "
                                          r"grids/quick.yaml \(tiny/lm/seed3\)"):
        check_standard(Project(REPO), "alibi", runs, [])


def test_a_record_with_a_field_the_recipe_no_longer_has_is_compared_by_its_id():
    """An older record's recipe may hold a field TrainRecipe has since lost: its run id says
    which run it is, and it is never validated as today's recipe."""
    runs = [SimpleNamespace(**{**vars(r), "run": {**r.run, "train": {**r.run["train"], "retired_knob": 1}}})
            for r in published_alibi()]
    check_standard(Project(REPO), "alibi", runs, [])


def test_an_encoding_that_does_not_load_is_named_as_such(project_root):
    (project_root / "encodings" / "broken.yaml").write_text("name: broken\nimpl: no-such-impl\n")
    with pytest.raises(NotStandard, match=r"^cannot load the encoding broken: .*broken.yaml:\d+: "):
        check_standard(Project(project_root), "broken", [], [])


@pytest.mark.integration
def test_submit_refuses_a_smoke_run_naming_the_standard_grids_missing_runs(tiny_grid, project_root, capsys):
    """What the smoke grid trains (one seed, a short recipe) on the standard grid's own task, size
    and seed 0: not one of the standard grid's twenty runs, since its recipe is another."""
    spec = (project_root / "encodings" / "alibi.yaml").read_text()
    (project_root / "encodings" / "my-alibi.yaml").write_text(spec.replace("name: alibi", "name: my-alibi", 1))
    grid = tiny_grid(name="smoke-my-alibi", encodings=["my-alibi"], tasks=["lm"], scales=[1, 2],
                     train={"steps": 10, "batch_size": 4, "seq_len": 64, "warmup_steps": 1}, eval=EVAL)
    assert main(["--root", str(project_root), "run", "--quiet", "--no-site", str(grid)]) == 0
    capsys.readouterr()
    assert main(["--root", str(project_root), "submit", "my-alibi"]) == 1
    out = capsys.readouterr()
    (line,) = out.err.strip().splitlines()  # one line
    assert line == ("error: my-alibi lacks 20 of the 20 training runs of the standard grid grids/quick.yaml "
                    "(tiny/lm/seed0-9, tiny/flip_flop/seed0-9): run `posbench run grids/quick.yaml --with-published` "
                    "with my-alibi among its encodings, then submit")
    assert "reproduced" not in out.out
    assert not (project_root / "submissions").exists()  # nothing written

    assert main(["--root", str(project_root), "submit", "my-alibi", "--grid", "smoke-my-alibi"]) == 1
    assert "'smoke-my-alibi' is not a published grid" in capsys.readouterr().err
    assert not (project_root / "submissions").exists()
