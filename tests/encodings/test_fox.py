"""The Forgetting Transformer against the authors' code (golden values from
scripts/golden/fox.py, which runs zhixuan-lin/forgetting-transformer's reference
attention and forget gate), and the decay hook's properties in the model."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from suite.encodings import ENCODINGS
from suite.modeling.model import AttentionPath, ModelConfig, attend

from tests.encodings.helpers import build_model, golden

Forgetting = ENCODINGS.get("forgetting")


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def test_decay_attention_is_the_authors_reference():
    """Our attention with the decay hook's cumulative sums gives the authors' reference
    output (their causal mask, decay bias and softmax), for mild and strong forgetting."""
    g = golden("fox")
    fox = Forgetting(Forgetting.Params(), ModelConfig(d_model=8, n_heads=2).dims)
    for case in g["attention"]:
        q, k, v, log_fgate = (f64(case[name]) for name in ("q", "k", "v", "log_fgate"))
        c = log_fgate.cumsum(dim=-1)  # [B, H, T]
        pos = torch.arange(q.shape[2])
        out = attend(q, k, v, fox, AttentionPath.FLOAT_MASK, pos, pos, decay=(c, c))
        torch.testing.assert_close(out, f64(case["out"]), rtol=1e-5, atol=1e-6)
        explicit = attend(q, k, v, fox, AttentionPath.EXPLICIT, pos, pos, decay=(c, c))  # the written-out path agrees
        torch.testing.assert_close(explicit, out, rtol=1e-10, atol=1e-12)


def test_forget_gate_is_the_authors():
    """decay(x) = logsigmoid(fgate_proj(x)) laid out [B, H, T], as ForgettingAttentionLayer."""
    g = golden("fox")["gate"]
    weight = f64(g["weight"])
    n_heads, d_model = weight.shape
    fox = Forgetting(Forgetting.Params(), ModelConfig(d_model=d_model, n_heads=n_heads).dims).double()
    with torch.no_grad():
        fox.fgate_proj.weight.copy_(weight)
        fox.fgate_proj.bias.copy_(f64(g["bias"]))
    torch.testing.assert_close(fox.decay(f64(g["hidden"])), f64(g["log_fgate"]), rtol=1e-6, atol=1e-7)


def test_gates_that_never_forget_give_nope():
    """With f = 1 (log f = 0) FoX is NoPE: same weights, same logits."""
    fox, nope = build_model("fox", seed=1).eval(), build_model("nope", seed=1).eval()
    state = {k: v for k, v in fox.state_dict().items() if not k.startswith("encodings.")}
    nope.load_state_dict(state)
    for enc in fox.encodings:
        with torch.no_grad():
            enc.fgate_proj.weight.zero_()
            enc.fgate_proj.bias.fill_(60.0)  # sigmoid(60) = 1 - 9e-27: log f = 0 in float32
    idx = torch.randint(0, 256, (2, 24))
    torch.testing.assert_close(fox(idx), nope(idx), rtol=1e-5, atol=1e-5)


def test_strong_forgetting_makes_attention_local():
    """The decay bias only ever lowers a logit, more for farther keys: with every gate at
    f = sigmoid(-20), attention keeps essentially only the query's own token."""
    fox = Forgetting(Forgetting.Params(), ModelConfig(d_model=8, n_heads=2).dims)
    T = 10
    q, k = torch.randn(1, 2, T, 4), torch.randn(1, 2, T, 4)
    v = torch.randn(1, 2, T, 4)
    c = torch.full((1, 2, T), F.logsigmoid(torch.tensor(-20.0)).item()).cumsum(-1)
    pos = torch.arange(T)
    out = attend(q, k, v, fox, AttentionPath.FLOAT_MASK, pos, pos, decay=(c, c))
    torch.testing.assert_close(out, v, rtol=1e-4, atol=1e-4)
