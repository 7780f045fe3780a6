"""StreamingLLM against its authors' cache and attention forward (golden values:
scripts/golden/streaming_llm.py, mit-han-lab/streaming-llm@2e50426 executed as written and
driven token by token), and through the model's explicit path."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from suite.modeling.model import AttentionPath

from tests.encodings.helpers import CFG, build_model, dims, encoding, explicit_attention, golden


@pytest.mark.parametrize("case", range(len(golden("streaming-llm")["cases"])))
def test_streaming_llm_is_the_authors_cache_and_attention(case):
    """Each (S, R) of the golden file: every row's weights over the text's keys, zero on the
    keys the reference's cache evicted, the sinks at their cache positions."""
    g = golden("streaming-llm")
    c = g["cases"][case]
    enc = encoding("streaming-llm", dims(head_dim=g["head_dim"]), base=g["base"], sinks=c["sinks"],
                   recent=c["recent"]).eval()
    weights = explicit_attention(enc, torch.tensor(g["q"]), torch.tensor(g["k"]))
    expected = torch.tensor(c["attention_weights"])
    assert (expected[-1] == 0).sum() == g["length"] - c["sinks"] - c["recent"] - 1  # the reference evicted keys
    torch.testing.assert_close(weights, expected, rtol=1e-5, atol=1e-5)


def test_streaming_llm_is_rope_within_the_cache_and_during_training():
    """With the default R = L - S - 1 nothing is evicted up to L tokens (1x is RoPE);
    beyond, rows differ; training (trains_as: rope) is plain RoPE."""
    torch.manual_seed(0)
    q, k = torch.randn(40, 16) * 2, torch.randn(40, 16) * 2
    rope, streaming = encoding("rope", dims(train_len=24)), encoding("streaming-llm", dims(train_len=24)).eval()
    assert streaming.recent == 24 - 4 - 1
    plain, streamed = explicit_attention(rope, q, k), explicit_attention(streaming, q, k)
    torch.testing.assert_close(plain[:24], streamed[:24])
    assert not torch.allclose(plain[24:], streamed[24:], atol=1e-3)
    assert torch.equal(explicit_attention(streaming.train(), q, k), plain)


def test_an_evicted_token_does_not_reach_the_query():
    """One layer, past the cache: changing a token between the sinks and the window leaves the
    last position's logits as they were (the cache no longer holds it); RoPE's change."""
    cfg = dataclasses.replace(CFG, n_layers=1)
    rope, streaming = build_model("rope", cfg=cfg).eval(), build_model("streaming-llm", cfg=cfg).eval()
    streaming.load_state_dict(rope.state_dict(), strict=True)  # trains_as: rope
    assert streaming.paths[0] is AttentionPath.EXPLICIT
    x = torch.randint(0, 256, (1, 48))
    y = x.clone()
    y[0, 10] = (x[0, 10] + 1) % 256  # index 10: past the 4 sinks, before the last query's 11-key window
    with torch.no_grad():
        torch.testing.assert_close(streaming(x)[0, -1], streaming(y)[0, -1])
        assert not torch.allclose(rope(x)[0, -1], rope(y)[0, -1])
