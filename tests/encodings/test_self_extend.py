"""Self-Extend against its authors' attention forward (golden values: scripts/golden/self_extend.py,
datamllab/LongLM@cdbbb06 executed as written), and through the model's explicit path."""

from __future__ import annotations

import pytest
import torch

from suite.modeling.model import AttentionPath

from tests.encodings.helpers import build_model, dims, encoding, explicit_attention, golden, spec


@pytest.mark.parametrize("case", range(len(golden("self-extend")["cases"])))
def test_self_extend_is_the_authors_attention(case):
    """Each (G, W) of the golden file, W / G fractional in four, the spec's defaults at L = 64
    and L = 16 among them: the attention weights of the reference's self_extend_forward,
    every row and key."""
    g = golden("self-extend")
    c = g["cases"][case]
    enc = encoding("self-extend", dims(head_dim=g["head_dim"]), base=g["base"], group_size=c["group_size"],
                   window=c["window"]).eval()
    weights = explicit_attention(enc, torch.tensor(g["q"]), torch.tensor(g["k"]))
    torch.testing.assert_close(weights, torch.tensor(c["attention_weights"]), rtol=1e-5, atol=1e-5)


def test_self_extend_is_rope_within_the_window_and_during_training():
    """Keys nearer than W keep RoPE's logits; training (trains_as: rope) is plain RoPE."""
    torch.manual_seed(0)
    q, k = torch.randn(40, 16) * 2, torch.randn(40, 16) * 2
    rope, extended = encoding("rope"), encoding("self-extend", window=8, group_size=4).eval()
    plain, grouped = explicit_attention(rope, q, k), explicit_attention(extended, q, k)
    torch.testing.assert_close(plain[:8], grouped[:8])  # rows that see no key 8 or more back
    assert not torch.allclose(plain[8:], grouped[8:], atol=1e-3)
    assert torch.equal(explicit_attention(extended.train(), q, k), plain)


def test_a_model_with_self_extend_takes_the_explicit_path_and_loads_the_rope_checkpoint():
    rope, extended = build_model("rope"), build_model("self-extend")
    extended.load_state_dict(rope.state_dict(), strict=True)  # trains_as: rope
    assert extended.paths[0] is AttentionPath.EXPLICIT


@pytest.mark.parametrize("train_len", [16, 48, 64, 128, 256, 1024])
def test_the_defaults_keep_the_authors_rule_at_every_published_scale(train_len):
    """The authors' rule (Jin et al. 2024; datamllab/LongLM@cdbbb06 README, "How to choose the
    group_size and neighbor_window"): the input fits the extended window, (L - W) G + W >= N,
    here at the largest scale the grids evaluate, N = 16 L, at every training length a grid
    uses (flip-flop 16, passkey 48, language modelling 64, 128, 256 and 1,024). And exactly:
    the farthest grouped distance, (N - 1) // G + W - W / G, is one the model was trained on
    (at most L - 1)."""
    enc = encoding("self-extend", dims(train_len=train_len))
    G, W, N = enc.params.group_size, enc.window, 16 * train_len
    assert spec("self-extend").params.get("window") is None and W == train_len // 4
    assert (train_len - W) * G + W >= N
    assert (N - 1) // G + W - W / G <= train_len - 1
