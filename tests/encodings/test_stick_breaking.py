"""Stick-breaking attention in its two variants (suite/encodings/stick_breaking.py).

stick-breaking: the layer the authors train, the model's attention layer with the same weights
against dolomite-engine's SBAttention (golden values: scripts/golden/stick_breaking_dolomite.py,
IBM/dolomite-engine@a250945f), read whole, a chunk of queries at a time and through a key/value
cache. stick-breaking-harness: the kernel's test harness, the model's attention against the
authors' PyTorch reference (scripts/golden/stick_breaking.py, shawntan/stickbreaking-attention@3147a38).
"""

from __future__ import annotations

import pytest
import torch

from suite.encodings.stick_breaking import StickBreakingParams
from suite.modeling.kv_cache import KVCache
from suite.modeling.model import Attention, AttentionPath, ModelConfig, attend, recorded_attention

from suite.plan.grid import encoding_content

from tests.encodings.helpers import build_model, dims, encoding, golden, spec


def reference_inputs():
    g = golden("stick-breaking-harness")
    q, k, v = (torch.tensor(g[n], dtype=torch.float32)[None] for n in ("q", "k", "v"))  # [1, H, T, Dh]
    return g, q, k, v


def test_the_harness_attention_is_the_authors_reference():
    """The model's attention (explicit path) over the reference's q, k, v gives the output of
    the reference's stickbreaking() with its remainder on the query's own value, to 1e-5."""
    g, q, k, v = reference_inputs()
    enc = encoding("stick-breaking-harness", dims(head_dim=g["head_dim"], n_heads=g["heads"]))
    pos = torch.arange(g["length"])
    out = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos)
    torch.testing.assert_close(out[0], torch.tensor(g["output"], dtype=torch.float32), rtol=1e-5, atol=1e-5)


def test_queries_read_in_chunks_get_the_same_weights():
    """Queries q0 .. read against every key up to them (a chunk, or one new token over a
    cache) get the rows of the whole square: the query's own key is found by index."""
    g, q, k, v = reference_inputs()
    enc = encoding("stick-breaking-harness", dims(head_dim=g["head_dim"], n_heads=g["heads"]))
    T, q0 = g["length"], 7
    pos = torch.arange(T)
    whole = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos)
    part = attend(q[:, :, q0:], k, v, enc, AttentionPath.EXPLICIT, pos[q0:], pos, q0=q0)
    torch.testing.assert_close(part, whole[:, :, q0:], rtol=0, atol=1e-6)


def test_the_stick_is_shared_out_whole_and_the_nearest_key_goes_first():
    """Each query's weights sum to 1 over the keys it sees, none after it. A key the query
    favours (logit +20) takes everything from every key before it: the stick is broken from
    the nearest key back, so an equal logit nearer the query wins."""
    enc = encoding("stick-breaking-harness", dims(head_dim=4, n_heads=1))
    T = 6
    scores = torch.randn(1, 1, T, T).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    weights = enc.normalize(scores, 0, 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 1, T))
    assert (weights.triu(1) == 0).all()
    scores = torch.full((1, 1, 1, T), -20.0)
    scores[..., [1, 3]] = 20.0  # query at index 5: keys 1 and 3 equally favoured; 3 is nearer
    weights = enc.normalize(scores, T - 1, 0)[0, 0, 0]
    assert weights[3] > 0.999 and weights[1] < 1e-6


def test_the_trained_layer_keeps_the_rest_of_the_stick_off_the_keys():
    """As the authors train it, no key takes the rest: the query's own key gets nothing, and
    what the weights leave is the remainder the gate puts on the learned bias."""
    enc = encoding("stick-breaking", dims(head_dim=4, n_heads=2))
    T = 6
    scores = torch.randn(1, 2, T, T).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    weights = enc.normalize(scores, 0, 0)
    assert (weights.triu(0) == 0).all()
    rest = enc._take_rest(torch.zeros(1, 2, T, 4))
    torch.testing.assert_close(weights.sum(-1) + rest, torch.ones(1, 2, T))
    assert rest[..., 0].eq(1).all()  # the first query has no earlier key: the whole stick is left


def trained_layer():
    """The model's attention layer and the stick-breaking encoding, loaded with the golden's
    SBAttention weights, in float64."""
    g = golden("stick-breaking")
    H, Dh = g["heads"], g["head_dim"]
    D = H * Dh
    cfg = ModelConfig(d_model=D, n_heads=H, n_layers=1, train_len=g["length"])
    attn = Attention(cfg).double()
    enc = encoding("stick-breaking", cfg.dims).double()

    def f64(name):
        return torch.tensor(g[name], dtype=torch.float64)

    with torch.no_grad():
        # SBAttention's c_attn rows are [q | k | v] per head (view(B, T, H, 3 Dh), chunk(3)); ours [Q | K | V]
        attn.qkv.weight.copy_(f64("c_attn").view(H, 3, Dh, D).transpose(0, 1).reshape(3 * D, D))
        attn.out.weight.copy_(f64("c_proj"))
        enc.head_bias.copy_(f64("head_bias").flatten())  # [H, Dh], held flat (out of weight decay)
        enc.norm.weight.copy_(f64("norm_weight"))
        enc.norm.bias.copy_(f64("norm_bias"))
    assert (enc.norm.num_groups, enc.norm.eps, enc.norm.affine) == (g["group_norm"]["groups"], g["group_norm"]["eps"], True)
    return g, attn, enc, f64("x"), f64("output")


@pytest.mark.parametrize("chunk", [None, 5])
def test_the_trained_layer_is_the_authors_sbattention(chunk):
    """The model's attention layer with the encoding of encodings/stick-breaking.yaml, given
    SBAttention's weights (projections, a nonzero head_bias and GroupNorm weights), gives its
    output to 1e-5, whole or a chunk of 5 queries at a time; the weights it records leave
    each query the reference's remainder."""
    g, attn, enc, x, want = trained_layer()
    pos = torch.arange(g["length"])
    with recorded_attention() as weights:
        out = attn(x, enc, pos, AttentionPath.EXPLICIT, chunk=chunk)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    rest = 1 - torch.cat([w.sum(-1) for w in weights], dim=2)  # [B, H, T], the chunks in order
    torch.testing.assert_close(rest, torch.tensor(g["remainder"], dtype=torch.float64), rtol=1e-5, atol=1e-5)
    assert rest.mean() > 0.1  # the remainder is large enough for the bias to show
    enc.head_bias.data.zero_()  # without the bias the layer is another one: the test sees it
    assert (attn(x, enc, pos, AttentionPath.EXPLICIT, chunk=chunk) - want).abs().max() > 1e-2


def test_the_trained_layer_through_a_key_value_cache():
    """A prompt, then one token at a time over the cached keys and values: the same output."""
    g, attn, enc, x, want = trained_layer()
    cache, steps, T = KVCache(), [], g["length"]
    for lo, hi in [(0, 6)] + [(t, t + 1) for t in range(6, T)]:
        pos = torch.arange(lo, hi)
        cache.positions = pos if cache.positions is None else torch.cat((cache.positions, pos))
        steps.append(attn(x[:, lo:hi], enc, pos, AttentionPath.EXPLICIT, cache=cache))
        cache.length += hi - lo
    torch.testing.assert_close(torch.cat(steps, dim=1), want, rtol=1e-5, atol=1e-5)


def test_a_gate_without_its_remainders_is_refused():
    enc = encoding("stick-breaking", dims(head_dim=4, n_heads=2))
    with pytest.raises(RuntimeError, match="no remainder"):
        enc.gate(torch.zeros(1, 2, 3, 4), torch.zeros(1, 3, 8))
    enc.normalize(torch.zeros(1, 2, 2, 2), 0, 0)
    with pytest.raises(RuntimeError, match="followed by its gate"):
        enc.gate(torch.zeros(1, 2, 3, 4), torch.zeros(1, 3, 8))


@pytest.mark.parametrize("name, parameters", [("stick-breaking", {"head_bias", "norm.weight", "norm.bias"}),
                                              ("stick-breaking-harness", set())])
def test_the_model_trains_it_on_the_explicit_path(name, parameters):
    """Each layer its own bias and norm (as each SBAttention has), and all of them learn."""
    model = build_model(name)
    assert all(p == AttentionPath.EXPLICIT for p in model.paths)
    assert {n.split(".", 1)[1] for n, _ in model.encodings.named_parameters()} == parameters
    assert len(model.encodings) == model.cfg.n_layers
    assert all(p.dim() < 2 for p in model.encodings.parameters())  # the trainer decays none of them, as the authors'
    idx = torch.randint(0, 256, (2, 16))
    model(idx).logsumexp(-1).mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_both_variants_have_new_ids_and_the_defaults_are_the_old_layer():
    """Runs recorded before issue 36 hold ``params: {}`` under the name stick-breaking and were
    the harness's variant: no new spec may share their id (records carry the name), and {}
    still resolves to the layer they trained."""
    old = {"impl": "stick_breaking", "params": {}}
    contents = [encoding_content(spec(n)) for n in ("stick-breaking", "stick-breaking-harness")]
    assert old not in contents and contents[0] != contents[1]
    assert spec("stick-breaking-harness").resolved_params() == StickBreakingParams()
    assert spec("stick-breaking").resolved_params() == StickBreakingParams(remainder="learned_bias", group_norm=True)
