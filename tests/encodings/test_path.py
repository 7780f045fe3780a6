"""PaTH attention against the authors' reference (golden values from scripts/golden/path.py,
which runs fla-org/flash-linear-attention's naive_path_attn), and its properties in the model."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.path_attention import path_logits
from suite.modeling.model import AttentionPath, attend

from tests.encodings.helpers import build_model, dims, encoding, golden

PaTH = ENCODINGS.get("path")


class GivenTransforms(PaTH):
    """PaTH whose w, beta and forget gates are the reference's inputs instead of its
    projections' outputs: the golden file gives the attention those inputs, not the
    projections (the authors' convolution and projection run only in Triton)."""

    def __init__(self, params, d, w, beta, log_gate):
        super().__init__(params, d)
        self.given = (w, beta, log_gate)

    def transforms(self, x):
        return self.given[0], self.given[1]

    def forget_gate(self, x):
        return self.given[2]


@pytest.mark.parametrize("index", range(4))
def test_attention_is_the_authors_reference(index):
    """The model's attention with PaTH's logits hook (and PaTH-FoX's decay) gives
    naive_path_attn's output, within one block of 64 and across blocks of 4."""
    case = golden("path")["attention"][index]
    q, k, v, w, beta, log_gate = (torch.tensor(case[n]) for n in ("q", "k", "v", "w", "beta", "log_gate"))
    B, H, T, Dh = q.shape
    enc = GivenTransforms(PaTH.Params(forget_gate=case["gate"]), dims(head_dim=Dh, n_heads=H), w, beta, log_gate)
    x = torch.zeros(B, T, H * Dh)  # read only through the given transforms
    c = enc.decay(x).cumsum(-1) if "decay" in enc.active_hooks() else None
    pos = torch.arange(T)
    out = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos, decay=None if c is None else (c, c), x=x)
    torch.testing.assert_close(out, torch.tensor(case["out"]), rtol=1e-5, atol=1e-5)


def test_a_chunk_of_queries_gets_the_logits_of_the_whole():
    """Queries [q0, q0 + n) over keys [k0, q0 + n), given the whole sequence's transforms,
    are the block of the whole's logits (the model's long-sequence chunks rely on it)."""
    gen = torch.Generator().manual_seed(0)
    B, H, T, Dh = 2, 3, 20, 4
    q, k = torch.randn(B, H, T, Dh, generator=gen), torch.randn(B, H, T, Dh, generator=gen)
    w = torch.nn.functional.normalize(torch.randn(B, H, T, Dh, generator=gen), dim=-1)
    beta = 2 * torch.rand(B, H, T, generator=gen)
    whole = path_logits(q, k, w, beta)
    for q0, n, k0 in [(8, 6, 3), (0, 5, 0), (15, 5, 10)]:
        for block in (64, 4, 3):  # one block, and blocks met one by one (the same numbers)
            part = path_logits(q[:, :, q0 : q0 + n], k[:, :, k0 : q0 + n], w, beta, q0, k0, block=block)
            torch.testing.assert_close(part, whole[:, :, q0 : q0 + n, k0 : q0 + n])


def test_the_logit_is_the_product_of_the_transforms_between_key_and_query():
    """logit(i, j) = q_i^T H_i ... H_{j+1} k_j, with the matrices built and multiplied out;
    the key's own transform and the query's later ones do not enter."""
    gen = torch.Generator().manual_seed(1)
    T, Dh = 7, 5
    q, k = torch.randn(1, 1, T, Dh, generator=gen, dtype=torch.float64), torch.randn(1, 1, T, Dh, generator=gen, dtype=torch.float64)
    w = torch.nn.functional.normalize(torch.randn(1, 1, T, Dh, generator=gen, dtype=torch.float64), dim=-1)
    beta = 2 * torch.rand(1, 1, T, generator=gen, dtype=torch.float64)
    got = path_logits(q.double(), k, w, beta)[0, 0]
    assert got.dtype == torch.float64  # computed in float32, returned in the queries' dtype
    eye = torch.eye(Dh, dtype=torch.float64)
    torch.testing.assert_close(path_logits(q, k, w, beta, block=2)[0, 0], got, rtol=1e-5, atol=1e-5)  # blocks of 2
    for i in range(T):
        product = eye
        for j in range(i, -1, -1):  # product = H_i ... H_{j+1}
            assert torch.allclose(got[i, j], q[0, 0, i] @ product @ k[0, 0, j], atol=1e-5)
            product = product @ (eye - beta[0, 0, j] * torch.outer(w[0, 0, j], w[0, 0, j]))
        assert torch.all(got[i, i + 1 :] == 0)


def test_transforms_that_do_nothing_give_nope():
    """beta = 0 makes every H the identity: a PaTH model is then NoPE with the same weights."""
    path, nope = build_model("path", seed=1).eval(), build_model("nope", seed=1).eval()
    nope.load_state_dict({k: v for k, v in path.state_dict().items() if not k.startswith("encodings.")})
    idx = torch.randint(0, 256, (2, 24))
    assert not torch.allclose(path(idx), nope(idx), atol=1e-4)  # PaTH's transforms do change the logits
    for enc in path.encodings:
        with torch.no_grad():
            enc.bt_proj.weight.zero_()
            enc.bt_proj.bias.fill_(-60.0)  # beta = 2 sigmoid(-60) = 2e-26
    torch.testing.assert_close(path(idx), nope(idx), rtol=1e-5, atol=1e-5)


def test_the_transforms_are_causal_unit_reflections():
    """w is a unit vector per head and token, beta in (0, 2), and token t's transform reads
    tokens <= t only (the short convolution is causal)."""
    enc = encoding("path", dims(head_dim=8, n_heads=2))
    x = torch.randn(2, 10, 16)
    w, beta = enc.transforms(x)
    assert w.shape == (2, 2, 10, 8) and beta.shape == (2, 2, 10)
    torch.testing.assert_close(w.norm(dim=-1), torch.ones(2, 2, 10))
    assert bool(((beta > 0) & (beta < 2)).all())
    later = x.clone()
    later[:, 6:] += 1.0
    w2, beta2 = enc.transforms(later)
    torch.testing.assert_close(w2[:, :, :6], w[:, :, :6])
    assert not torch.allclose(w2[:, :, 6:], w[:, :, 6:])


def test_path_fox_decays_by_the_gate_over_sqrt_head_dim():
    """PaTH-FoX's decay is its log gate divided by sqrt(Dh) (the authors scale the gate sums
    with the logit); plain PaTH has no decay hook."""
    d = dims(head_dim=16, n_heads=2)
    fox, plain = encoding("path-fox", d), encoding("path", d)
    x = torch.randn(1, 5, 32)
    torch.testing.assert_close(fox.decay(x), fox.forget_gate(x) / 4)
    assert "decay" in fox.active_hooks() and "decay" not in plain.active_hooks()


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="w_rank and conv_size"):
        PaTH.Params(w_rank=-1)
    with pytest.raises(ValueError, match="init_std"):
        PaTH.Params(init_std=0)
