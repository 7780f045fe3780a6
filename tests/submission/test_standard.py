"""`posbench submit` bundles a submission only when the records hold every run of the standard
grid with the encoding in it (suite.submission.standard): a smoke run is refused, in one line
naming what is missing, and nothing is written."""

from __future__ import annotations

import pytest

from suite.cli.main import main
from suite.submission.standard import _cells

EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}


def test_missing_cells_are_named_by_size_task_and_seed_ranges():
    cells = [("tiny", "lm", s) for s in (1, 2, 3, 5, 7, 8)] + [("tiny", "flip_flop", s) for s in range(10)]
    assert _cells(cells) == "tiny/lm/seed1-3,5,7-8, tiny/flip_flop/seed0-9"


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
