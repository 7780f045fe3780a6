"""Randomized positions (Ruoss et al. 2023): a wrapper that keeps its inner encoding's
contract and feeds it sorted random position ids."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.randomized import Randomized, RandomizedParams
from suite.modeling.model import AttentionPath, ModelConfig, Transformer
from suite.specs import SpecErrors, load_encoding

from tests.encodings.helpers import dims, golden


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


def test_evaluation_draws_fresh_ids_per_call_repeatably_and_can_be_arange():
    """The authors draw at test time as in training (a fresh key per batch); ours
    restart the same sequence of draws at every set_scale."""
    enc = wrapped(max_position=100).eval()
    enc.set_scale(1)
    first = [enc.positions(30, "cpu") for _ in range(3)]
    assert not torch.equal(first[0], first[1])
    enc.set_scale(2)
    assert all(torch.equal(a, enc.positions(30, "cpu")) for a in first)
    assert enc.max_length() == 100
    with pytest.raises(ValueError, match="max_position"):
        enc.positions(101, "cpu")
    plain = wrapped(max_position=100, eval_positions="arange").eval()
    assert torch.equal(plain.positions(300, "cpu"), torch.arange(300)) and plain.max_length() is None


# -- against the authors' draws (scripts/golden/randomized.py) ------------------------------


def our_draws(n: int, length: int, max_position: int) -> torch.Tensor:
    """[n, length] ids, each from the wrapper's own positions() in training mode."""
    enc = wrapped(max_position=max_position).train()
    torch.manual_seed(0)
    return torch.stack([enc.positions(length, "cpu") for _ in range(n)])


def test_draws_are_uniform_subsets_as_the_authors():
    """Every 3-subset of [0, 6) as often as in the reference's 20,000 draws (5 sigma of
    the difference of two binomial frequencies)."""
    g = golden("randomized")["subsets"]
    n = g["n"]
    draws = our_draws(n, g["length"], g["max_position"])
    assert torch.all(draws[:, 1:] > draws[:, :-1])  # sorted, without repeats
    ours = {}
    for row in draws.tolist():
        key = ",".join(map(str, row))
        ours[key] = ours.get(key, 0) + 1
    assert set(ours) <= set(g["counts"])
    for key, count in g["counts"].items():
        p_ref, p_ours = count / n, ours.get(key, 0) / n
        p = (p_ref + p_ours) / 2
        assert abs(p_ours - p_ref) < 5 * math.sqrt(2 * p * (1 - p) / n), key


def test_each_slot_is_distributed_as_the_authors():
    """The k-th smallest of 8 ids of [0, 32): two-sample Kolmogorov-Smirnov distance to
    the reference's draws below its 1e-6 critical value (2.69 sqrt(2/n))."""
    g = golden("randomized")["order_statistics"]
    n = g["n"]
    draws = our_draws(n, g["length"], g["max_position"])
    for slot, histogram in enumerate(g["histograms"]):
        ref_cdf = torch.tensor(histogram, dtype=torch.float64).cumsum(0) / n
        our_cdf = torch.bincount(draws[:, slot], minlength=g["max_position"]).double().cumsum(0) / n
        assert (our_cdf - ref_cdf).abs().max() < 2.69 * math.sqrt(2 / n), slot


@pytest.mark.parametrize("training", [True, False])
def test_draws_are_made_where_the_authors_make_them(training):
    """As the reference's NOISY_ROTARY recorded in the golden file: per forward pass one
    draw per attention layer, the same for q and k and for every example of the batch,
    fresh in every layer and every pass, at training and test time alike."""
    g = golden("randomized")["model_draws"]
    for passes in g["passes"]:
        layers = [layer["q"] for layer in passes]
        assert all(layer["q"] == layer["k"] for layer in passes) and len(layers[0]) == g["length"]
        assert len({tuple(ids) for ids in layers}) == g["n_layers"]
    assert g["passes"][0] != g["passes"][1]

    cfg = ModelConfig(d_model=16, n_layers=g["n_layers"], n_heads=2, d_ff=32, train_len=8)
    model = Transformer(cfg, lambda dims: Randomized(RandomizedParams(max_position=g["max_position"]), dims))
    model.train(training)
    model.set_scale(1)
    inner, calls = model.encodings[0].inner, []  # one instance, shared by the layers

    def recording_rotate(q, k, q_pos, k_pos):
        calls.append((q_pos, k_pos))
        return type(inner).rotate(inner, q, k, q_pos, k_pos)

    inner.rotate = recording_rotate
    passes = []
    for _ in range(2):
        calls.clear()
        model(torch.randint(0, 256, (g["batch"], g["length"])))
        passes.append([q_pos for q_pos, _ in calls])
        assert all(torch.equal(q_pos, k_pos) for q_pos, k_pos in calls)
        assert len(passes[-1]) == g["n_layers"] and passes[-1][0].shape == (g["length"],)  # one [T] draw per layer
        assert len({tuple(ids.tolist()) for ids in passes[-1]}) == g["n_layers"]
    assert not all(torch.equal(a, b) for a, b in zip(*passes))


@pytest.mark.parametrize("inner, path", [("rotary", AttentionPath.FUSED), ("kerple", AttentionPath.FLOAT_MASK),
                                         ("cope", AttentionPath.EXPLICIT), ("sinusoidal", AttentionPath.FUSED),
                                         ("addrope", AttentionPath.FUSED)])
def test_the_wrapper_takes_its_inner_encodings_hooks_and_layout(inner, path):
    cfg = ModelConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, train_len=8)
    model = Transformer(cfg, lambda dims: Randomized(RandomizedParams(inner=inner, max_position=64), dims))
    assert type(model.encodings[0]).hooks() == ENCODINGS.get(inner).hooks()
    assert model.path is path and model.per_layer is ENCODINGS.get(inner).per_layer
    assert model(torch.randint(0, 256, (1, 8))).shape == (1, 8, 256)


def test_hooks_delegate_to_the_inner_encoding():
    enc = wrapped(inner="rotary", inner_params={"base": 500}, redraw_per_layer=False)
    q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    pos = torch.tensor([3, 7, 8, 20, 33])
    for a, b in zip(enc.rotate(q, k, pos, pos), enc.inner.rotate(q, k, pos, pos)):
        assert torch.equal(a, b)
    assert enc.inner.params.base == 500
    redrawing = wrapped(inner="rerope", max_position=64).eval()  # rotate draws this layer's ids; score gets them too
    scores = torch.randn(1, 2, 5, 5)
    q2, k2 = redrawing.rotate(q, k, pos, pos)
    layer = redrawing.layer_pos
    assert not torch.equal(layer, pos) and layer.shape == pos.shape
    for a, b in zip((q2, k2), redrawing.inner.rotate(q, k, layer, layer)):
        assert torch.equal(a, b)
    assert torch.equal(redrawing.score(q2, k2, scores, pos, pos), redrawing.inner.score(q2, k2, scores, layer, layer))
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
