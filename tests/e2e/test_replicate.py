"""``posbench replicate``: a stratified sample of a published snapshot re-run with each record's
numerics, figure by figure, and whether the headlines still hold (the committed snapshot's own
samples: test_replicate_committed.py and test_replicate_this_class.py)."""

from __future__ import annotations

import gzip
import json

from suite.cli.main import main
from suite.core import machine, numerics
from suite.results import tolerances

TASK_TRAIN = {"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1}
EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "task_examples": 4, "lmeval_rolling": False}


def test_a_published_grid_replicates_bit_for_bit_and_a_doctored_figure_does_not(tiny_grid, project_root, capfd):
    grid = tiny_grid(name="rep", encodings=["nope", "alibi"], tasks=["parity", "flip_flop"], scales=[1, 2],
                     seeds=[0], task_train=TASK_TRAIN, eval=EVAL)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    assert main(["--root", str(project_root), "publish", str(grid), "--out", "snap"]) == 0
    capfd.readouterr()
    assert main(["--root", str(project_root), "replicate", "--snapshot", "snap", "--sample", "2"]) == 0
    out = capfd.readouterr().out
    assert "2 piece(s) of snap/, stratified over grids, tasks and encodings\n" in out
    # two strata of four (parity and flip_flop, each for nope and alibi; a seed each), across tasks first: one
    # of each task, both of alibi (generated tasks: a folder corpus's path is part of its run's id,
    # and publishing shortens it)
    assert "alibi/tiny/flip_flop/" in out and "alibi/tiny/parity/" in out and "nope/" not in out
    assert "2 of 2 piece(s) bit-identical, 0 within tolerance, 0 different" in out
    assert "CHANGED" not in out and "0 changed" in out

    # records of another machine class (here: another stepping of the CPU): `--cpu this` samples
    # none of them; by default they are re-run and compared within the cross-class tolerances
    runs_path = project_root / "snap" / "runs.jsonl.gz"
    with gzip.open(runs_path, "rt") as f:
        runs = [json.loads(line) for line in f]
    for run in runs:
        run["provenance"]["numerics"].update(cpu="Another CPU", stepping="99")
    with gzip.open(runs_path, "wt") as f:
        f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in runs)
    here = machine.label(numerics.measured())
    assert main(["--root", str(project_root), "replicate", "--snapshot", "snap", "--sample", "1", "--cpu",
                 "this"]) == 1
    err = capfd.readouterr().err
    assert f"no training run of snap/ was computed on this machine's class ({here}); its records name Another CPU (" in err
    assert "Without `--cpu this` they are re-run here and compared within the measured cross-class tolerances" in err

    # a figure changed in the snapshot: its piece is different, and replicate says so. The training
    # loss, whose cross-class tolerance is hundredths: an accuracy, whichever value it is changed to
    # within [0, 1], may stay within its tolerance (accuracies move by up to 0.7 across classes)
    worst = tolerances.published().allowed("flip_flop final_train_loss")
    for run in runs:
        if run["task"] == "flip_flop" and run["encoding"] == "alibi":
            run["provenance"]["final_train_loss"] += 10 * worst + 1.0
    with gzip.open(runs_path, "wt") as f:
        f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in runs)
    # the first stratum is flip_flop/alibi's (doctored; parity/alibi's, untouched, replicated above)
    assert main(["--root", str(project_root), "replicate", "--snapshot", "snap", "--sample", "1"]) == 1
    out = capfd.readouterr().out
    assert "alibi/tiny/flip_flop/" in out and "DIFFERENT" in out
    assert "0 of 1 piece(s) bit-identical, 0 within tolerance, 1 different" in out
    assert ("another machine class (stepping: recorded 99, here " in out
            and "compared within the measured cross-class tolerances" in out)

    # runs trained on a GPU are not re-run on a CPU (hours, and another device class): left out,
    # and a snapshot of nothing else says where to replicate it
    for run in runs:
        run["provenance"].update(device="cuda:NVIDIA H200", precision="bf16-mixed")
    with gzip.open(runs_path, "wt") as f:
        f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in runs)
    assert main(["--root", str(project_root), "replicate", "--snapshot", "snap", "--sample", "1"]) == 1
    err = capfd.readouterr().err
    assert "trained on another kind of device (a GPU) than this machine's: replicate them on a machine with one" in err
