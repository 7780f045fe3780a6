"""Randomized positions (Ruoss et al. 2023): a wrapper that keeps its inner encoding's
contract and feeds it sorted random position ids."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.randomized import Randomized, RandomizedParams
from suite.model import AttentionPath, ModelConfig, Transformer
from suite.specs import SpecErrors, load_encoding

from .helpers import dims


def wrapped(inner="rotary", inner_params=None, d=None, **params):
    return Randomized(RandomizedParams(inner=inner, inner_params=inner_params or {}, **params), d or dims(head_dim=8, n_heads=2))


def test_training_positions_are_a_sorted_random_subset():
    enc = wrapped(max_position=100).train()
    torch.manual_seed(0)
    a, b = enc.positions(30, "cpu"), enc.positions(30, "cpu")
    for pos in (a, b):
        assert len(pos) == 30 and len(set(pos.tolist())) == 30
        assert torch.all(pos[1:] > pos[:-1]) and pos.min() >= 0 and pos.max() < 100
    assert not torch.equal(a, b)


def test_evaluation_positions_are_repeatable_and_can_be_arange():
    enc = wrapped(max_position=100).eval()
    assert torch.equal(enc.positions(30, "cpu"), enc.positions(30, "cpu"))
    assert enc.max_length() == 100
    with pytest.raises(ValueError, match="max_position"):
        enc.positions(101, "cpu")
    plain = wrapped(max_position=100, eval_positions="arange").eval()
    assert torch.equal(plain.positions(300, "cpu"), torch.arange(300)) and plain.max_length() is None


@pytest.mark.parametrize("inner, path, per_layer", [("rotary", AttentionPath.FUSED, False), ("kerple", AttentionPath.FLOAT_MASK, True),
                                                    ("cope", AttentionPath.EXPLICIT, True), ("sinusoidal", AttentionPath.FUSED, False)])
def test_the_wrapper_takes_its_inner_encodings_hooks_and_layout(inner, path, per_layer):
    cfg = ModelConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, train_len=8)
    model = Transformer(cfg, lambda: Randomized(RandomizedParams(inner=inner, max_position=64), cfg.dims))
    assert type(model.encodings[0]).hooks() == ENCODINGS.get(inner).hooks()
    assert model.path is path and model.per_layer is per_layer
    assert model(torch.randint(0, 256, (1, 8))).shape == (1, 8, 256)


def test_hooks_delegate_to_the_inner_encoding():
    enc = wrapped(inner="rotary", inner_params={"base": 500})
    q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    pos = torch.tensor([3, 7, 8, 20, 33])
    for a, b in zip(enc.rotate(q, k, pos, pos), enc.inner.rotate(q, k, pos, pos)):
        assert torch.equal(a, b)
    assert enc.inner.params.base == 500
    enc.set_scale(4)
    assert enc.inner.scale == 4


def test_bad_inner_specs_are_refused_with_a_reason(tmp_path: Path):
    with pytest.raises(ValueError, match="fewer than max_position"):
        wrapped(inner="learned", inner_params={"max_positions": 10}, max_position=100)
    path = tmp_path / "encodings" / "rand.yaml"
    path.parent.mkdir()
    path.write_text("name: rand\ndisplay_name: R\nfamily: wrapper\npaper: p\nimpl: randomized\n"
                    "params: {inner: rotary, inner_params: {bse: 10}}\n")
    with pytest.raises(SpecErrors, match="did you mean 'base'"):
        load_encoding(path)
    path.write_text("name: rand\ndisplay_name: R\nfamily: wrapper\npaper: p\nimpl: randomized\nparams: {inner: rotry}\n")
    with pytest.raises(SpecErrors, match="did you mean 'rotary'"):
        load_encoding(path)
