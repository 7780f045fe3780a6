"""Dual Chunk Attention against its authors' attention forward (golden values:
scripts/golden/dual_chunk.py, HKUNLP/ChunkLlama@2add4d7 executed as written), and through
the model's explicit path."""

from __future__ import annotations

import pytest
import torch

from suite.modeling.model import AttentionPath

from tests.encodings.helpers import build_model, dims, encoding, explicit_attention, golden

CASES = golden("dual-chunk")["cases"]


def attention_output(enc, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The explicit path's weights times the values [T, Dh]."""
    return explicit_attention(enc, q, k) @ v


@pytest.mark.parametrize("case", range(len(CASES)))
def test_dual_chunk_is_the_authors_attention(case):
    """Decoding token by token (the reference's PyTorch branch, to 1e-5) and prefill past L
    (its flash branch, get_mscale active; to 1e-2, its own bfloat16 merge)."""
    c, g = CASES[case], golden("dual-chunk")
    enc = encoding("dual-chunk", dims(head_dim=g["head_dim"], train_len=c["train_len"]), base=g["base"]).eval()
    assert (enc.chunk_size, enc.local_window) == (c["chunk_size"], c["local_window"])  # the reference's defaults
    enc.set_scale(c["length"] / c["train_len"] if c["mode"] == "prefill" else 1.0)
    out = attention_output(enc, *(torch.tensor(c[x]) for x in ("q", "k", "v")))
    tol = 1e-5 if c["mode"] == "decoding" else 1e-2
    torch.testing.assert_close(out, torch.tensor(c["output"]), rtol=tol, atol=tol)


def test_dual_chunk_is_rope_in_the_first_chunk_and_during_training():
    """Rows of the first chunk see only intra-chunk keys (RoPE's logits); later rows differ;
    training (trains_as: rope) is plain RoPE."""
    torch.manual_seed(0)
    q, k, v = torch.randn(60, 16) * 2, torch.randn(60, 16) * 2, torch.eye(16).repeat(4, 1)[:60]
    rope, chunked = encoding("rope", dims(train_len=32)), encoding("dual-chunk", dims(train_len=32)).eval()
    assert chunked.chunk_len == 24 - 4
    plain, remapped = attention_output(rope, q, k, v), attention_output(chunked, q, k, v)
    torch.testing.assert_close(plain[:20], remapped[:20])
    assert not torch.allclose(plain[20:], remapped[20:], atol=1e-3)
    assert torch.equal(attention_output(chunked.train(), q, k, v), plain)


def test_dual_chunk_rejects_a_chunk_no_longer_than_its_window():
    with pytest.raises(ValueError, match="must exceed local_window"):
        encoding("dual-chunk", dims(train_len=32), chunk_size=8, local_window=8)


def test_a_model_with_dual_chunk_takes_the_explicit_path_and_loads_the_rope_checkpoint():
    rope, chunked = build_model("rope"), build_model("dual-chunk")
    chunked.load_state_dict(rope.state_dict(), strict=True)  # trains_as: rope
    assert chunked.paths[0] is AttentionPath.EXPLICIT
