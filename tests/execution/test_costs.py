"""Costs are measured per piece: a worker that trains several runs records each run's own
peak memory, not the process's high-water mark, whatever it ran before."""

from __future__ import annotations

import pytest
import torch

from suite.core.runtime import peak_memory_mb
from suite.execution.runner import train_run
from suite.plan.grid import TrainingRun
from suite.plan.task_kinds import kind_of
from suite.specs import Project, SizeSpec
from suite.submission.contract import SMOKE_RECIPE, SMOKE_TASK
from tests.conftest import REPO

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

SMALL = SizeSpec(name="small-probe", d_model=32, n_layers=1, n_heads=4, d_ff=64)
LARGE = SizeSpec(name="large-probe", d_model=384, n_layers=4, n_heads=4, d_ff=1536)
# one step: the optimizer state and one step's activations make the peak; the learning curve's held-out
# probe (a forward of 128 examples, after every step of a run this short) is the slow part
RECIPE = SMOKE_RECIPE.model_copy(update={"steps": 1, "warmup_steps": 0, "batch_size": 32, "seq_len": 64})


def run_of(size: SizeSpec) -> TrainingRun:
    from suite.specs import load_encoding

    encoding = load_encoding(REPO / "encodings" / "rope.yaml")
    return TrainingRun(encoding, size, SMOKE_TASK, 0, RECIPE, kind_of(SMOKE_TASK).fingerprint(SMOKE_TASK))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path: the resident set's peak")
def test_two_runs_in_one_worker_get_their_own_order_independent_peaks(tmp_path):
    peaks = {}
    for order, sizes in enumerate(((SMALL, LARGE), (LARGE, SMALL))):
        project = Project(tmp_path / f"order{order}")
        for size in sizes:
            record, module = train_run(run_of(size), project, progress_bar=False)
            del module  # as the runner lets a run's model go before the next trains
            assert record.status == "done", record.reason
            peaks[(order, size.name)] = record.provenance.peak_memory_mb
    small, large = peaks[(0, SMALL.name)], peaks[(0, LARGE.name)]
    assert large > small + 50  # MiB: the large model's activations and optimizer state
    # each run's own peak in either order, within 150 MiB (the allocator's leftovers vary by about 100);
    # a process-wide high-water mark gave the small run 1,100 MiB after the large one instead of about 440
    assert peaks[(1, SMALL.name)] == pytest.approx(small, abs=150)
    assert peaks[(1, LARGE.name)] == pytest.approx(large, abs=150)
    assert peak_memory_mb() < max(peaks.values()) + 50  # the figure is the process's current peak, not its lifetime's
