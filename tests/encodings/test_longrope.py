"""LongRoPE against its authors' code (golden values: scripts/golden/longrope.py,
microsoft/LongRoPE@c9e56aa executed as written), and its search's constraints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from suite.encodings.longrope import LongRopeParams
from suite.encodings.longrope_search import DimMonoSearch, monotone

from tests.encodings.helpers import dims, encoding, golden

REFERENCE_F32 = dict(rtol=0, atol=5e-5)  # the reference's float32 angles at position 255 (script docstring)


@pytest.mark.parametrize("case", range(len(golden("longrope")["cases"])))
def test_longrope_is_the_authors_rotary_embedding(case):
    """Given factors: cos, sin (with the "su" attention factor) and q, k rotated as the authors'
    LongRoPEScaledRotaryEmbedding and transformers' apply_rotary_pos_emb give them."""
    g = golden("longrope")
    c = g["cases"][case]
    enc = encoding("longrope", dims(head_dim=g["head_dim"], train_len=g["train_len"]), base=g["base"], factors=c["factors"],
                   target=c["scale"])  # the reference's max_position_embeddings is scale x L
    enc.set_scale(c["scale"])
    pos = torch.tensor(g["positions"])
    cos, sin = enc.cos_sin(int(pos.max()) + 1, "cpu")
    torch.testing.assert_close(torch.cat([cos[pos]] * 2, -1), torch.tensor(c["cos"]), **REFERENCE_F32)
    torch.testing.assert_close(torch.cat([sin[pos]] * 2, -1), torch.tensor(c["sin"]), **REFERENCE_F32)
    q, k = torch.tensor(g["q"])[None, None], torch.tensor(g["k"])[None, None]
    q_rot, k_rot = enc.rotate(q, k, pos, pos)
    torch.testing.assert_close(q_rot[0, 0], torch.tensor(c["q_rotated"]), **REFERENCE_F32)
    torch.testing.assert_close(k_rot[0, 0], torch.tensor(c["k_rotated"]), **REFERENCE_F32)


@pytest.mark.parametrize("case", range(len(golden("longrope")["cases"])))
def test_the_search_starts_where_the_authors_start(case):
    """Before a search, beyond L: the factors evolution/search.py starts from (YaRN's mask)."""
    g = golden("longrope")
    c = g["cases"][case]
    enc = encoding("longrope", dims(head_dim=g["head_dim"], train_len=g["train_len"]), base=g["base"], target=c["scale"])
    torch.testing.assert_close(enc.rescale_factors(c["scale"]), torch.tensor(c["start_factors"], dtype=torch.float64),
                               rtol=1e-6, atol=1e-6)
    assert not enc.searched


@pytest.mark.parametrize("scale", ["1", "16"])
def test_the_attention_factor_is_the_targets_at_every_length(scale):
    """Set for 4 x L (the spec's target) and read at 1x and at 16x, the attention factor is
    sqrt(1 + ln 4 / ln L) = 1.155 at both, as the authors' embedding fixes it from its target
    (rope/longrope.py:48) and transformers' longrope applies it; the tables are transformers'
    (ones as the short factor within L, the target's start factors beyond) and, at 16x, the
    authors' too (which apply their factors within L as well)."""
    g = golden("longrope")
    t = g["target"]
    read = t["reads"][scale]
    enc = encoding("longrope", dims(head_dim=g["head_dim"], train_len=g["train_len"]), base=g["base"])
    assert enc.params.target == t["target"]
    enc.set_scale(int(scale))
    attention_factor = enc.frequencies()[1]
    assert attention_factor == pytest.approx(read["authors_mscale"], rel=1e-12)
    assert attention_factor == pytest.approx(read["transformers_attention_factor"], rel=1e-12)
    pos = torch.tensor(read["positions"])
    cos, sin = enc.cos_sin(int(pos.max()) + 1, "cpu")
    tables = ["transformers"] + (["authors"] if scale == "16" else [])
    for source in tables:
        torch.testing.assert_close(torch.cat([cos[pos]] * 2, -1), torch.tensor(read[f"{source}_cos"]), **REFERENCE_F32)
        torch.testing.assert_close(torch.cat([sin[pos]] * 2, -1), torch.tensor(read[f"{source}_sin"]), **REFERENCE_F32)


def test_at_the_training_length_it_is_rope_with_the_attention_factor_and_searched_factors_take_over_beyond():
    torch.manual_seed(0)
    q, k, pos = torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16), torch.arange(40)
    rope, longrope = encoding("rope", dims(train_len=32)), encoding("longrope", dims(train_len=32))
    mscale = longrope.frequencies()[1]
    assert mscale == pytest.approx((1 + math.log(4) / math.log(32)) ** 0.5)
    for a, b in zip(rope.rotate(q, k, pos, pos), longrope.rotate(q, k, pos, pos)):
        torch.testing.assert_close(a * mscale, b)
    longrope.set_scale(4)
    before = longrope.rotate(q, k, pos, pos)[0]
    longrope.set_factors(torch.linspace(1, 5, 8, dtype=torch.float64))
    assert longrope.searched
    after = longrope.rotate(q, k, pos, pos)[0]
    assert not torch.allclose(before, after)  # the cached tables were rebuilt with the new factors
    state = longrope.state_dict()
    fresh = encoding("longrope", dims(train_len=32))
    fresh.set_scale(4)
    fresh.rotate(q, k, pos, pos)  # builds tables with the start factors...
    fresh.load_state_dict(state)  # ...which a checkpoint's factors replace
    torch.testing.assert_close(fresh.rotate(q, k, pos, pos)[0], after)


@pytest.mark.parametrize("bad, message", [({"factors": [2.0, 1.0]}, "non-decreasing"), ({"factors": [0.5, 1.0]}, ">= 1"),
                                          ({"parents_size": 65}, "parents_size"), ({"list_step": 0}, "list_step")])
def test_bad_params_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        LongRopeParams(**bad)


def test_the_search_keeps_its_constraints_and_finds_the_minimum_it_can_reach():
    """On a known fitness (distance to a target vector inside the search space) every scored
    candidate is monotone, >= 1, within the authors' range [1, 1 + s + list_step] and on the list_step grid, none is scored
    twice, and the best gets far closer than the start."""
    target = np.array([1.0, 1.2, 1.9, 2.5, 3.1, 3.6, 4.4, 4.9])
    params = LongRopeParams(population_size=16, iterations=12, mutation_numbers=8, crossover_size=8, parents_size=8)
    search = DimMonoSearch(lambda f: float(np.abs(f - target).sum()), scale=4, params=params, seed=0)
    start = np.array([1.0, 2.0, 3.0, 4.0, 4.0, 4.0, 4.0, 4.0])
    result = search.run(start)
    for f in search.history:
        assert monotone(f) and f.min() >= 1 and f.max() <= 5.01 + 1e-9
        assert np.allclose(np.round(f * 100), f * 100, atol=1e-6)
    assert len(search.history) == result.evaluated
    assert len({tuple(np.round(f, 6)) for f in search.history}) == len(search.history)  # none scored twice
    assert result.start_loss == pytest.approx(np.abs(start - target).sum())
    assert result.loss < 0.5 * result.start_loss
    assert result.best_per_iteration == sorted(result.best_per_iteration, reverse=True)
