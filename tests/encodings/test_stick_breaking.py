"""Stick-breaking attention: the model's attention against the authors' PyTorch reference
(golden values: scripts/golden/stick_breaking.py, shawntan/stickbreaking-attention@3147a38),
in one piece and a chunk of queries at a time, and the stick's allotment."""

from __future__ import annotations

import torch

from suite.modeling.model import AttentionPath, attend

from tests.encodings.helpers import build_model, dims, encoding, golden


def reference_inputs():
    g = golden("stick-breaking")
    q, k, v = (torch.tensor(g[n], dtype=torch.float32)[None] for n in ("q", "k", "v"))  # [1, H, T, Dh]
    return g, q, k, v


def test_attention_is_the_authors_reference():
    """The model's attention (explicit path) over the reference's q, k, v gives the output of
    the reference's stickbreaking() with its remainder on the query's own value, to 1e-5."""
    g, q, k, v = reference_inputs()
    enc = encoding("stick-breaking", dims(head_dim=g["head_dim"], n_heads=g["heads"]))
    pos = torch.arange(g["length"])
    out = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos)
    torch.testing.assert_close(out[0], torch.tensor(g["output"], dtype=torch.float32), rtol=1e-5, atol=1e-5)


def test_queries_read_in_chunks_get_the_same_weights():
    """Queries q0 .. read against every key up to them (a chunk, or one new token over a
    cache) get the rows of the whole square: the query's own key is found by index."""
    g, q, k, v = reference_inputs()
    enc = encoding("stick-breaking", dims(head_dim=g["head_dim"], n_heads=g["heads"]))
    T, q0 = g["length"], 7
    pos = torch.arange(T)
    whole = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos)
    part = attend(q[:, :, q0:], k, v, enc, AttentionPath.EXPLICIT, pos[q0:], pos, q0=q0)
    torch.testing.assert_close(part, whole[:, :, q0:], rtol=0, atol=1e-6)


def test_the_stick_is_shared_out_whole_and_the_nearest_key_goes_first():
    """Each query's weights sum to 1 over the keys it sees, none after it. A key the query
    favours (logit +20) takes everything from every key before it: the stick is broken from
    the nearest key back, so an equal logit nearer the query wins."""
    enc = encoding("stick-breaking", dims(head_dim=4, n_heads=1))
    T = 6
    scores = torch.randn(1, 1, T, T).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    weights = enc.normalize(scores, 0, 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 1, T))
    assert (weights.triu(1) == 0).all()
    scores = torch.full((1, 1, 1, T), -20.0)
    scores[..., [1, 3]] = 20.0  # query at index 5: keys 1 and 3 equally favoured; 3 is nearer
    weights = enc.normalize(scores, T - 1, 0)[0, 0, 0]
    assert weights[3] > 0.999 and weights[1] < 1e-6


def test_the_model_trains_it_on_the_explicit_path():
    model = build_model("stick-breaking")
    assert all(p == AttentionPath.EXPLICIT for p in model.paths)
    idx = torch.randint(0, 256, (2, 16))
    model(idx).logsumexp(-1).mean().backward()
    assert all(p.grad is not None for p in model.parameters())
