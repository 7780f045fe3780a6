"""PoPE against lucidrains/PoPE-pytorch (golden values from scripts/golden/pope.py): the polar
coordinates of q and k, the logits, the attention output through the model's own attention,
a decoding step, and the properties the paper claims (relative logits, content magnitudes
that ignore position)."""

from __future__ import annotations

import math

import torch

from suite.encodings import ModelDims
from suite.modeling.model import AttentionPath, attend, path_of

from tests.encodings.helpers import build_model, golden, spec


def reference_pope():
    """encodings/pope.yaml at the golden's shape, with the golden's key bias."""
    g = golden("pope")
    s = spec("pope")
    d = ModelDims(g["heads"] * g["head_dim"], g["heads"], g["head_dim"], 1, 64, layer=0)
    enc = s.implementation()(s.resolved_params(), d)
    with torch.no_grad():
        enc.delta.copy_(torch.tensor(g["bias"]))
    return g, enc


def test_pope_coordinates_logits_and_attention_are_the_references():
    """rotate gives the reference's apply_pope_to_qk coordinates (q times sqrt(2), which keeps
    the reference's 1/sqrt(head_dim) under the model's 1/sqrt(2 head_dim)); the logits are
    compute_attn_similarity's; the model's causal attention on its path is
    flash_attn_with_pope's output; the clamp of the key bias to [-2 pi, 0] is the reference's."""
    g, enc = reference_pope()
    q, k, v = (torch.tensor(g[n])[None] for n in ("q", "k", "v"))
    pos = torch.tensor(g["positions"])
    with torch.no_grad():
        q2, k2 = enc.rotate(q, k, pos, pos)
        torch.testing.assert_close(q2[0] / math.sqrt(2), torch.tensor(g["q_polar"]), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(k2[0], torch.tensor(g["k_polar"]), atol=1e-5, rtol=1e-5)
        logits = (q2 @ k2.transpose(-2, -1))[0] / math.sqrt(2)
        torch.testing.assert_close(logits, torch.tensor(g["logits"]), atol=1e-4, rtol=1e-5)
        path = path_of(enc)
        assert path is AttentionPath.FUSED
        for p in (path, AttentionPath.EXPLICIT):
            out = attend(q2, k2, v, enc, p, pos, pos)
            torch.testing.assert_close(out[0], torch.tensor(g["out"]), atol=1e-5, rtol=1e-5, msg=str(p))
        q_last, _ = enc.rotate(q[..., -1:, :], k, pos[-1:], pos)
        torch.testing.assert_close(q_last[0] / math.sqrt(2), torch.tensor(g["q_last_polar"]), atol=1e-5, rtol=1e-5)


def test_pope_logits_are_relative_and_magnitudes_ignore_position():
    """Shifting every id by the same amount leaves the logits unchanged (they depend on t - s);
    the magnitude of each coordinate pair is softplus of the input, whatever the position."""
    _, enc = reference_pope()
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 9, 32, generator=gen), torch.randn(1, 2, 9, 32, generator=gen)
    pos = torch.arange(9)
    with torch.no_grad():
        a = (lambda q2, k2: q2 @ k2.transpose(-2, -1))(*enc.rotate(q, k, pos, pos))
        b = (lambda q2, k2: q2 @ k2.transpose(-2, -1))(*enc.rotate(q, k, pos + 100, pos + 100))
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)  # float32 phases at ids ~100
        _, k2 = enc.rotate(q, k, pos, pos)
        pairs = k2.unflatten(-1, (32, 2))
        torch.testing.assert_close(pairs.norm(dim=-1), torch.nn.functional.softplus(k), atol=1e-6, rtol=1e-6)


def test_pope_has_a_bias_per_layer_and_decodes_with_a_cache():
    """One key bias per layer (each attention module holds its own PoPE); decoding one token at a
    time over cached keys gives the logits of one forward."""
    from suite.modeling.kv_cache import KVCache

    model = build_model("pope").eval()
    assert len(model.encodings) == model.cfg.n_layers
    assert all(e.delta.shape == (model.cfg.n_heads, model.cfg.d_model // model.cfg.n_heads) for e in model.encodings)
    idx = torch.randint(0, 256, (1, 30))
    with torch.no_grad():
        whole = model(idx)
        cache = KVCache()
        steps = [model.extend(idx[:, :11], cache)]  # the prompt, then one token at a time
        steps += [model.extend(idx[:, t : t + 1], cache) for t in range(11, 30)]
        stepped = torch.cat(steps, dim=1)
    torch.testing.assert_close(stepped, whole, rtol=1e-5, atol=1e-5)
