"""DroPE's QK-norm variant (encodings/nope-qk-norm.yaml) against its authors' attention
forward (golden values: scripts/golden/drope.py, SakanaAI/DroPE@260a8bb executed as written)."""

from __future__ import annotations

import math

import torch

from suite.modeling.model import AttentionPath

from tests.encodings.helpers import build_model, dims, encoding, golden


def test_the_attention_is_the_authors_qk_norm_nope():
    """q and k normalised over both heads together with the authors' gains, no rotation,
    softmax(q k^T / sqrt(Dh)) under the causal mask: the weights their forward returns."""
    g = golden("drope-qk-norm")
    H, Dh, T = g["heads"], g["head_dim"], g["length"]
    enc = encoding("nope-qk-norm", dims(head_dim=Dh, n_heads=H, train_len=T), eps=g["eps"])
    with torch.no_grad():
        enc.q_norm.weight.copy_(torch.tensor(g["q_norm_weight"]))
        enc.k_norm.weight.copy_(torch.tensor(g["k_norm_weight"]))
    q, k = (torch.tensor(g[name]).view(1, T, H, Dh).transpose(1, 2) for name in ("q", "k"))
    pos = torch.arange(T)
    with torch.no_grad():
        qn, kn = enc.rotate(q, k, pos, pos)
    logits = (qn @ kn.transpose(-2, -1)) / math.sqrt(Dh)
    weights = logits.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    torch.testing.assert_close(weights[0], torch.tensor(g["attention_weights"]), rtol=1e-5, atol=1e-5)


def test_the_norm_is_over_all_heads_together_and_ignores_position():
    """One RMS over H x Dh per token (not one per head), the same at every position."""
    enc = encoding("nope-qk-norm", dims(head_dim=8, n_heads=2))
    q = torch.randn(1, 2, 5, 8)
    q[:, 1] *= 10  # a per-head norm would bring both heads to unit RMS
    qn, _ = enc.rotate(q, q, torch.arange(5), torch.arange(5))
    flat = qn.transpose(1, 2).reshape(1, 5, 16)
    torch.testing.assert_close(flat.pow(2).mean(-1), torch.ones(1, 5), rtol=1e-4, atol=1e-4)
    assert (qn[:, 1].pow(2).mean(-1) > 10 * qn[:, 0].pow(2).mean(-1)).all()
    shifted, _ = enc.rotate(q, q, torch.arange(5) + 100, torch.arange(5) + 100)
    torch.testing.assert_close(shifted, qn)


def test_each_layer_has_its_own_norms_and_the_fused_path():
    model = build_model("nope-qk-norm")
    norms = [name for name in model.state_dict() if name.endswith("_norm.weight")]
    assert len(norms) == 2 * model.cfg.n_layers
    assert all(path is AttentionPath.FUSED for path in model.paths)
