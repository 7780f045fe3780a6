"""LongRoPE as its authors run it: a child that searches its factors on the parent's weights at
the child's length, keeps them in its checkpoint, then fine-tunes with them (a real grid run)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml

from suite.cli.main import main
from suite.execution.runner import run_path
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.submission.verify import verify
from suite.training.calibration import calibration_samples
from suite.training.checkpoints import load_checkpoint
from suite.training.fit import TrainingFailed, fit
from tests.conftest import write_yaml
from tests.e2e.test_distributed import StopAt
from tests.e2e.test_extension import PARENT, QUICK_EVAL

SEARCH = {"population_size": 8, "iterations": 3, "mutation_numbers": 4, "crossover_size": 4, "parents_size": 4,
          "samples": 3}


def test_a_longrope_child_searches_on_its_parent_and_fine_tunes_with_what_it_found(tiny_grid, project_root):
    spec = yaml.safe_load((project_root / "encodings" / "longrope.yaml").read_text())
    write_yaml(project_root / "encodings" / "longrope-small.yaml",
               {**spec, "name": "longrope-small", "params": {**spec["params"], **SEARCH}})
    grid = tiny_grid(name="lr", encodings=["rope"], scales=[1, 2], eval=QUICK_EVAL, train=PARENT,
                     extensions=[{"parent": "rope", "encodings": ["longrope-small"], "factor": 2, "steps": 6, "lr": 1e-3}])
    project = Project(project_root)
    plan = expand(load_grid(grid, project))
    parent, child = plan.runs
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    record = json.loads(run_path(project, child).read_text())
    assert record["status"] == "done", record.get("error")
    found = record["provenance"]["calibration"]
    factors = np.array(found["longrope_factors"])
    assert len(factors) == 8 and factors.min() >= 1 and np.all(np.diff(factors) >= 0)
    assert found["search_candidates"] > SEARCH["population_size"]
    assert found["search_loss"] <= found["search_start_loss"]

    # killed at step 3 of its fine-tuning and run again: it resumes with the factors it found
    # (among its weights) and records the search of its first attempt, which it does not repeat
    run_path(project, child).unlink()
    (project.checkpoints / f"{child.run_id}.ckpt").unlink()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the grid's worker trains: one thread
    try:
        with pytest.raises(TrainingFailed, match="preempted"):
            fit(child, project.checkpoints, progress_bar=False, callbacks=[StopAt(3).callback])
    finally:
        torch.set_num_threads(threads)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    resumed = json.loads(run_path(project, child).read_text())
    assert resumed["provenance"]["resumed_from_step"] == 3
    again = resumed["provenance"]["calibration"]
    assert again.pop("search_s") > 0 and again == {k: v for k, v in found.items() if k != "search_s"}

    # the losses it reports are the parent's at those factors, on the samples it drew
    model = load_checkpoint(project_root / json.loads(run_path(project, parent).read_text())["checkpoint"]).model
    lr_model = load_checkpoint(project_root / record["checkpoint"]).model
    x, y = calibration_samples(child, SEARCH["samples"])
    searched = lr_model.encodings[0]
    torch.testing.assert_close(searched.searched_factors, torch.tensor(factors, dtype=torch.float64), atol=1e-6, rtol=0)
    state = {k: v for k, v in model.state_dict().items()}
    lr_model.load_state_dict({**state, "encodings.0.searched_factors": searched.searched_factors.clone()})
    lr_model.eval()
    with torch.no_grad():
        loss = F.cross_entropy(lr_model(x).flatten(0, 1), y.flatten()).item()
        start = searched.rescale_factors(2)  # the searched ones now; the start is YaRN's split
        assert torch.equal(start, searched.searched_factors.double())
        assert abs(loss - found["search_loss"]) < 1e-4
        # the fine-tuned child evaluates with the factors it searched, at every scale
        assert lr_model.encodings[0].scale == 2.0 and lr_model.encodings[0].searched


def test_a_search_only_child_keeps_its_parents_weights_and_evaluates_with_what_it_found(tiny_grid, project_root):
    """0 steps: LongRoPE searched on the parent and evaluated without fine-tuning (Ding et al.
    2024 report the search alone too); every weight but the factors is the parent's."""
    spec = yaml.safe_load((project_root / "encodings" / "longrope.yaml").read_text())
    write_yaml(project_root / "encodings" / "longrope-small.yaml",
               {**spec, "name": "longrope-small", "params": {**spec["params"], **SEARCH}})
    grid = tiny_grid(name="lr0", encodings=["rope"], scales=[1, 2], eval=QUICK_EVAL, train=PARENT,
                     extensions=[{"parent": "rope", "encodings": ["longrope-small"], "factor": 2, "steps": 0,
                                  "label": "search2x"}])
    project = Project(project_root)
    parent, child = expand(load_grid(grid, project)).runs
    assert child.train.steps == 0 and child.encoding.name == "longrope-small-search2x"
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    record = json.loads(run_path(project, child).read_text())
    assert record["status"] == "done", record.get("error")
    assert record["lineage"]["steps"] == 0
    assert record["provenance"].get("final_train_loss") is None and record["provenance"].get("train_tokens_per_s") is None
    assert record["provenance"]["calibration"]["search_loss"] <= record["provenance"]["calibration"]["search_start_loss"]
    theirs = load_checkpoint(project_root / json.loads(run_path(project, parent).read_text())["checkpoint"]).model
    mine = load_checkpoint(project_root / record["checkpoint"]).model
    searched = mine.state_dict().pop("encodings.0.searched_factors")
    assert not torch.isnan(searched).any()
    for name, weight in theirs.state_dict().items():
        assert torch.equal(mine.state_dict()[name], weight), name
    evals = [json.loads(p.read_text()) for p in (project_root / "results" / "evals").glob("*.json")]
    assert {e["scale"] for e in evals if e["run_id"] == child.run_id and e["status"] == "done"} == {1, 2}
    # `posbench verify` re-trains the parent, searches again and compares what the search found
    verified = verify(run_path(project, child), project, log=lambda _: None)
    assert verified.mismatches == 0, verified.lines
    assert sum(line.startswith("identical: calibration factor") for line in verified.lines) == 8, verified.lines
    assert not any("final_train_loss" in line for line in verified.lines)
    assert main(["--root", str(project_root), "site"]) == 0
    page = (project_root / "site" / "_build" / "runs" / f"{child.run_id}.html").read_text()
    assert "not fine-tuned (its encoding calibrated on these weights alone) at L = 64 (2x)" in page
    assert "LongRoPE, calibrated on rope at 2x, not fine-tuned" in page
