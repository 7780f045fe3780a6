"""Fine-tuned extensions (child runs) end to end: a parent trains, children continue from its
checkpoint at 2 x L, ids chain, a rerun trains nothing, a preempted child resumes to the
weights of an uninterrupted one, a parent without its checkpoint is trained again first,
two workers share the work, and the record and page show the lineage."""

from __future__ import annotations

import json

import pytest
import torch

from suite.cli.main import main
from suite.execution.runner import run_path
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.submission.verify import verify
from suite.training.checkpoints import load_checkpoint, resume_dir
from suite.training.fit import TrainingFailed, fit
from tests.e2e.test_distributed import StopAt

QUICK_EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
PARENT = {"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2}
EXTENSION = {"parent": "rope", "encodings": ["rope-pi", "nope"], "factor": 2, "steps": 12, "lr": 1.0e-3}


def extension_grid(tiny_grid, name="ext", train=PARENT, extension=EXTENSION):
    return tiny_grid(name=name, encodings=["rope", "rope-pi"], scales=[1, 2], eval=QUICK_EVAL, train=train,
                     extensions=[extension])


def test_a_child_continues_from_its_parent_and_shows_its_lineage(tiny_grid, project_root, capsys):
    grid = extension_grid(tiny_grid)
    project = Project(project_root)
    plan = expand(load_grid(grid, project))
    parent, *children = plan.runs
    assert [r.encoding.name for r in plan.runs] == ["rope", "rope-pi-ft2x", "nope-ft2x"]
    assert all(c.parent is parent and c.train.seq_len == 64 and c.base_len == 32 for c in children)
    # the parent's id is part of the child's: another parent, another child, same extension recipe
    other = expand(load_grid(extension_grid(tiny_grid, "ext2", train={**PARENT, "steps": 21}), Project(project_root)))
    assert other.runs[1].train == children[0].train and other.runs[1].run_id != children[0].run_id
    # the children evaluate at the parent's scales: 2x is 64 bytes for every row
    assert {(e.run.run_id, e.scale) for e in plan.evaluations} == {(r.run_id, s) for r in plan.runs for s in (1, 2)}

    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    records = {r.run_id: json.loads(run_path(project, r).read_text()) for r in plan.runs}
    assert {r["status"] for r in records.values()} == {"done"}
    pi = records[children[0].run_id]
    assert pi["lineage"] == {"parent_run_id": parent.run_id, "parent_label": parent.label, "parent_encoding": "rope",
                             "parent_steps": 20, "parent_seq_len": 32, "steps": 12, "seq_len": 64, "factor": 2.0}
    assert records[parent.run_id]["lineage"] is None
    # the child started from the parent's weights: fine-tuning moved them, but not far
    weights = {r.run_id: load_checkpoint(project_root / records[r.run_id]["checkpoint"]).model.state_dict()
               for r in (parent, children[0])}
    moved = [(weights[children[0].run_id][k] - w).norm() / w.norm() for k, w in weights[parent.run_id].items()
             if w.dtype.is_floating_point and w.norm() > 0]
    assert 0 < max(moved) < 0.5
    # PI fine-tuned keeps its factor 2 at every scale: at 1x (32 bytes) it is not the parent's model
    child_model = load_checkpoint(project_root / pi["checkpoint"]).model
    assert child_model.encodings[0].scale == 2.0
    child_model.set_scale(1)
    assert child_model.encodings[0].scale == 2.0

    written = {p: p.stat().st_mtime_ns for p in project.runs.glob("*.json")}
    capsys.readouterr()
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0  # a rerun trains nothing
    assert "3 training runs, 8 evaluations; 0 run(s) with work to do, 0 evaluation(s)" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in project.runs.glob("*.json")} == written

    # `posbench verify` re-trains a child's parent first, then the child, and reproduces its figures
    verified = verify(run_path(project, children[0]), project, log=lambda _: None)
    assert verified.mismatches == 0 and verified.compared > 1, verified.lines

    site = project_root / "site" / "_build" / "runs"
    child_page, parent_page = ((site / f"{r.run_id}.html").read_text() for r in (children[0], parent))
    assert f'href="{parent.run_id}.html">{parent.label}</a> (20 steps at L = 32), fine-tuned for 12 steps at L = 64' \
        in child_page
    assert f'href="{children[0].run_id}.html">RoPE + position interpolation, fine-tuned from rope at 2x (12 steps)</a>' in parent_page


def test_a_preempted_child_resumes_and_a_published_parent_is_trained_again(tiny_grid, project_root):
    grid = extension_grid(tiny_grid, extension={**EXTENSION, "encodings": ["rope-pi"]})
    project = Project(project_root)
    plan = expand(load_grid(grid, project))
    parent, child = plan.runs
    torch.set_num_threads(1)  # one thread for both runs of the child: CPU kernels are deterministic for a thread count
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    uninterrupted = json.loads(run_path(project, child).read_text())
    weights = load_checkpoint(project_root / uninterrupted["checkpoint"]).model.state_dict()

    # the child is preempted at step 7 (an hpc checkpoint, as Lightning's requeue writes it) and its record removed
    run_path(project, child).unlink()
    (project.checkpoints / f"{child.run_id}.ckpt").unlink()
    with pytest.raises(TrainingFailed, match="preempted"):
        fit(child, project.checkpoints, progress_bar=False, callbacks=[StopAt(7).callback])
    assert list(resume_dir(project.checkpoints, child).glob("hpc_ckpt_*.ckpt"))

    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    resumed = json.loads(run_path(project, child).read_text())
    assert resumed["provenance"]["resumed_from_step"] == 7
    assert resumed["provenance"]["final_train_loss"] == uninterrupted["provenance"]["final_train_loss"]
    mine = load_checkpoint(project_root / resumed["checkpoint"]).model.state_dict()
    diffs = {k: (mine[k] - w).abs().max().item() for k, w in weights.items() if not torch.equal(mine[k], w)}
    assert not diffs, diffs

    # a parent done without its checkpoint (a published record) is trained again, once, by the
    # process that reaches its child
    for run in (parent, child):
        (project.checkpoints / f"{run.run_id}.ckpt").unlink()
    run_path(project, child).unlink()
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    assert (project.checkpoints / f"{parent.run_id}.ckpt").is_file()
    assert json.loads(run_path(project, child).read_text())["status"] == "done"


def test_two_workers_divide_a_grid_with_children_and_train_each_run_once(tiny_grid, project_root):
    """Claims hold for children: with --jobs 2 a worker that reaches a child while the other
    trains its parent waits for it; every run trains once, every evaluation runs once."""
    grid = extension_grid(tiny_grid, "ext-jobs")
    project = Project(project_root)
    plan = expand(load_grid(grid, project))
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site", "--jobs", "2"]) == 0
    logs = "".join(p.read_text() for p in project.logs.glob("worker-*.log"))
    assert logs.count("trained in") == len(plan.runs) == 3, logs
    for e in plan.evaluations:
        assert logs.count(f"extrapolation {e.scale}x as {e.encoding.name}: bpb=") == 1, e.label
    assert all(json.loads(run_path(project, r).read_text())["status"] == "done" for r in plan.runs)
    assert not list(project.claims.glob("*.json"))


def test_a_drope_qk_norm_child_loads_the_rope_weights_and_adds_its_gains_at_ones(tiny_grid, project_root, tmp_path):
    """DroPE's QK-norm variant as a child of a RoPE parent (SakanaAI/DroPE loads the RoPE weights
    with strict=False, the norms it adds left at their ones): every weight of the parent in
    the child, the q and k gains of every layer at ones, before the child's first step."""
    from suite.training.fit import start_from_parent
    from suite.training.module import LanguageModel

    grid = extension_grid(tiny_grid, "drope-qk", extension={"parent": "rope", "encodings": ["nope-qk-norm"],
                                                            "factor": 1, "steps": 5, "lr": 1.0e-3, "label": "drope"})
    plan = expand(load_grid(grid, Project(project_root)))
    (child,) = [r for r in plan.runs if r.parent is not None]
    parent = fit(child.parent, tmp_path, progress_bar=False)
    module = LanguageModel(child.to_dict())
    start_from_parent(module, parent.checkpoint)
    theirs = parent.module.model.state_dict()
    mine = module.model.state_dict()
    added = {k for k in mine if k.endswith(("q_norm.weight", "k_norm.weight"))}
    assert len(added) == 2 * module.model.cfg.n_layers
    assert all(torch.equal(mine[k], torch.ones_like(mine[k])) for k in added)
    assert set(mine) - added == set(theirs)
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
    # and it trains from there, as a grid runs it
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    child_record = json.loads(run_path(Project(project_root), child).read_text())
    assert child_record["status"] == "done" and child_record["lineage"]
