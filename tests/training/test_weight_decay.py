"""Which parameters AdamW decays (suite.training.module.weight_decay_groups).

The weights of two or more dimensions are decayed, the rest not, unless an encoding names a
parameter in ``no_weight_decay``: a spectrum learned per head ([H, d/2]) then takes the rule of
the same spectrum shared by the heads ([d/2]) instead of being decayed for its shape."""

from __future__ import annotations

import pytest

from suite.plan.grid import TrainingRun
from suite.plan.task_kinds import kind_of
from suite.specs import load_encoding
from suite.submission.contract import SMOKE_RECIPE, SMOKE_SIZE, SMOKE_TASK
from suite.training.module import LanguageModel, weight_decay_groups

from tests.encodings.helpers import SPECS, spec


def module_of(encoding_spec) -> LanguageModel:
    run = TrainingRun(encoding_spec, SMOKE_SIZE, SMOKE_TASK, 0, SMOKE_RECIPE, kind_of(SMOKE_TASK).fingerprint(SMOKE_TASK))
    return LanguageModel(run.to_dict())


def optimizer_groups(module: LanguageModel) -> tuple[set[int], set[int]]:
    optimizer = module.configure_optimizers()["optimizer"]
    decayed = {id(p) for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]}
    undecayed = {id(p) for g in optimizer.param_groups if g["weight_decay"] == 0 for p in g["params"]}
    return decayed, undecayed


@pytest.mark.parametrize("name", ["grape-m", "grape-m-ctx"])
def test_a_per_head_spectrum_takes_no_decay_as_the_shared_one(name):
    shared = module_of(spec(name))
    per_head = module_of(spec(name).model_copy(update={"params": {**spec(name).params, "per_head": True}}))
    for module, shape in ((shared, 1), (per_head, 2)):
        spectra = [enc.log_freq for enc in module.model.encodings]
        assert spectra and all(s.dim() == shape for s in spectra)
        decayed, undecayed = optimizer_groups(module)
        assert all(id(s) in undecayed for s in spectra)
        assert id(module.model.blocks[0].attn.qkv.weight) in decayed


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_shipped_spec_keeps_the_shape_rule(path):
    """No shipped spec names a parameter of two or more dimensions, so the groups (and the
    published records trained with them) are the shape rule's, in the same order."""
    module = module_of(load_encoding(path))
    decay, no_decay = weight_decay_groups(module)
    named = list(module.named_parameters())
    assert [id(p) for p in decay] == [id(p) for _, p in named if p.dim() >= 2]
    assert [id(p) for p in no_decay] == [id(p) for _, p in named if p.dim() < 2]
