"""RoPE with learned per-head frequencies (RoPE-Mixed on one axis) against the authors' code
(golden values from scripts/golden/rope_mixed.py, which runs naver-ai/rope-vit's
compute_mixed_cis and apply_rotary_emb on an image one row high), and what the spec promises:
at initialisation it is RoPE, the frequencies learn per layer, head and pair, without weight decay."""

from __future__ import annotations

import pytest
import torch

from suite.encodings.base import ModelDims
from suite.encodings.rope_mixed import RopeMixed
from suite.encodings.rotary import default_inv_freq

from tests.encodings.helpers import build_model, dims, encoding, golden, logits_matrix, spec

GOLDEN = golden("rope-mixed")
SHAPE = GOLDEN["shape"]
# float64: the same functions to rounding; float32: their angles t f are float32 products
# (up to 26 rad here, so rounded by up to 1.6e-6 rad), ours float64
TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-5)}
CASES = [(c, layer) for c in GOLDEN["cases"] for layer in range(SHAPE["depth"])]


def half_split(x: torch.Tensor) -> torch.Tensor:
    """Their layout (pairs (2i, 2i + 1)) to ours (pairs (i, i + d/2)): a fixed permutation."""
    return torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)


def loaded(case: dict, layer: int) -> RopeMixed:
    """Our encoding of ``layer`` with the reference's f_x row of that layer."""
    d = ModelDims(d_model=SHAPE["n_head"] * SHAPE["head_dim"], n_heads=SHAPE["n_head"], head_dim=SHAPE["head_dim"],
                  n_layers=SHAPE["depth"], train_len=SHAPE["T"], layer=layer)
    enc = RopeMixed(spec("rope-learned-heads").resolved_params(), d).to(getattr(torch, case["dtype"]))
    with torch.no_grad():
        enc.freqs.copy_(torch.tensor(case["f_x"][layer]))
    return enc


def tensor(case: dict, key: str, layer: int | None = None) -> torch.Tensor:
    value = case[key] if layer is None else case[key][layer]
    return torch.tensor(value, dtype=getattr(torch, case["dtype"]))


@pytest.mark.parametrize("case, layer", CASES, ids=lambda v: v["name"] if isinstance(v, dict) else f"layer{v}")
def test_rotation_is_the_authors_through_the_pair_permutation(case, layer):
    enc = loaded(case, layer)
    pos = torch.tensor(case["t_x"]).long()
    assert not any(case["t_y"])  # the 1-D restriction: f_y played no part
    q_rot, k_rot = enc.rotate(half_split(tensor(case, "q")), half_split(tensor(case, "k")), pos, pos)
    torch.testing.assert_close(q_rot, half_split(tensor(case, "q_rot", layer)), **TOL[case["dtype"]])
    torch.testing.assert_close(k_rot, half_split(tensor(case, "k_rot", layer)), **TOL[case["dtype"]])


@pytest.mark.parametrize("case, layer", CASES, ids=lambda v: v["name"] if isinstance(v, dict) else f"layer{v}")
def test_logits_are_the_authors(case, layer):
    """q_m . k_n of each head, which the pair layout does not change, as their rotated q and k give it."""
    enc = loaded(case, layer)
    pos = torch.tensor(case["t_x"]).long()
    q_rot, k_rot = enc.rotate(half_split(tensor(case, "q")), half_split(tensor(case, "k")), pos, pos)
    theirs = tensor(case, "q_rot", layer) @ tensor(case, "k_rot", layer).transpose(-2, -1)
    torch.testing.assert_close(q_rot @ k_rot.transpose(-2, -1), theirs, **TOL[case["dtype"]])


def test_the_golden_frequencies_are_not_ropes():
    """The check above would not tell learned frequencies from RoPE's if the golden held RoPE's."""
    rope = default_inv_freq(SHAPE["head_dim"], 10000.0).repeat(SHAPE["n_head"])
    for row in GOLDEN["cases"][0]["f_x"]:
        assert not torch.allclose(torch.tensor(row, dtype=torch.float64), rope, rtol=0.01)


# -- at initialisation: RoPE ----------------------------------------------------------------


def test_it_starts_at_ropes_spectrum_in_every_head():
    enc = encoding("rope-learned-heads", dims(head_dim=16, n_heads=3))
    spectrum = default_inv_freq(16, 10000.0).float()
    assert torch.equal(enc.freqs.detach(), spectrum.repeat(3))  # head-major rows [H * d/2], bit for bit


def test_at_initialisation_it_is_rope():
    """Same rotations as rope to the float32 rounding of the frequencies, and the same model: the
    same weights from the same seed (the frequencies draw nothing) and the same logits."""
    d = dims(head_dim=16, n_heads=2, train_len=64)
    ours, rope = encoding("rope-learned-heads", d), encoding("rope", d)
    q, k = torch.randn(2, 2, 64, 16), torch.randn(2, 2, 64, 16)
    pos = torch.arange(64)
    for mine, theirs in zip(ours.rotate(q, k, pos, pos), rope.rotate(q, k, pos, pos)):
        torch.testing.assert_close(mine, theirs, rtol=1e-6, atol=1e-6)
    model, rope_model = build_model("rope-learned-heads", seed=0), build_model("rope", seed=0)
    weights = {n: w for n, w in model.state_dict().items() if not n.startswith("encodings.")}
    assert weights.keys() == rope_model.state_dict().keys()
    assert all(torch.equal(w, rope_model.state_dict()[n]) for n, w in weights.items())
    idx = torch.randint(0, 256, (2, 4 * model.cfg.train_len), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(model(idx), rope_model(idx), rtol=1e-6, atol=1e-6)
        model.encodings[1].freqs[5] *= 1.5  # layer 1, head 0, pair 5 learned away: another model
        assert not torch.allclose(model(idx), rope_model(idx), atol=1e-4)


# -- learning -------------------------------------------------------------------------------


def test_the_gradient_reaches_each_heads_frequencies_exactly():
    """Autograd's gradient of the frequencies is the finite differences' (float64), and a loss
    on head 1 alone moves head 1's frequencies alone."""
    enc = encoding("rope-learned-heads", dims(head_dim=8, n_heads=3)).double()
    q, k = torch.randn(1, 3, 12, 8, dtype=torch.float64), torch.randn(1, 3, 12, 8, dtype=torch.float64)
    pos = torch.arange(12)

    def head_logits(freqs):
        with torch.no_grad():
            enc.freqs.copy_(freqs)
        q_rot, k_rot = enc.rotate(q, k, pos, pos)
        return (q_rot @ k_rot.transpose(-2, -1))[:, 1].sin().sum()

    head_logits(enc.freqs.detach().clone()).backward()
    grad = enc.freqs.grad.view(3, 4)
    assert torch.all(grad[1] != 0) and torch.all(grad[[0, 2]] == 0)
    base, eps = enc.freqs.detach().clone(), 1e-6
    for j in range(12):
        step = torch.zeros(12, dtype=torch.float64)
        step[j] = eps
        numeric = (head_logits(base + step) - head_logits(base - step)).item() / (2 * eps)
        assert enc.freqs.grad[j].item() == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_logits_depend_on_the_offset_alone_with_learned_frequencies():
    """RoPE's relative law holds for any learned frequencies (RoPE-Mixed's point), and rotations keep norms."""
    enc = encoding("rope-learned-heads", dims(head_dim=8, n_heads=1)).double()
    with torch.no_grad():
        enc.freqs.copy_(torch.tensor([0.9, -0.3, 0.05, 2.5]))
    q_vec, k_vec = torch.randn(8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    pos = torch.arange(24)
    logits = logits_matrix(enc, q_vec, k_vec, pos)
    torch.testing.assert_close(logits[1:, 1:], logits[:-1, :-1], rtol=1e-12, atol=1e-12)
    q_rot, _ = enc.rotate(q_vec.expand(1, 1, 24, 8), k_vec.expand(1, 1, 24, 8), pos, pos)
    torch.testing.assert_close(q_rot.norm(dim=-1), q_vec.norm().expand(1, 1, 24), rtol=1e-12, atol=1e-12)


def test_each_layer_has_its_own_frequencies_and_no_weight_decay():
    """As the authors' freqs [2, depth, H * d/2] in their no_weight_decay: the trainer's AdamW puts
    every layer's frequencies in its group without decay, and the other weights in the decayed one."""
    from suite.plan.grid import TrainingRun
    from suite.plan.task_kinds import kind_of
    from suite.submission.contract import SMOKE_RECIPE, SMOKE_SIZE, SMOKE_TASK
    from suite.training.module import LanguageModel

    run = TrainingRun(spec("rope-learned-heads"), SMOKE_SIZE, SMOKE_TASK, 0, SMOKE_RECIPE,
                      kind_of(SMOKE_TASK).fingerprint(SMOKE_TASK))
    module = LanguageModel(run.to_dict())
    freqs = [enc.freqs for enc in module.model.encodings]
    assert len(freqs) == module.model.cfg.n_layers and len({id(f) for f in freqs}) == len(freqs)
    optimizer = module.configure_optimizers()["optimizer"]
    undecayed = {id(p) for g in optimizer.param_groups if g["weight_decay"] == 0 for p in g["params"]}
    decayed = {id(p) for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]}
    assert decayed and all(id(f) in undecayed for f in freqs)
    assert id(module.model.blocks[0].attn.qkv.weight) in decayed  # the rule the frequencies are exempt from


def test_bad_params_and_dims_are_refused_by_name():
    with pytest.raises(ValueError, match="base"):
        encoding("rope-learned-heads", base=1.0)
    with pytest.raises(ValueError, match="head_dim"):
        encoding("rope-learned-heads", dims(head_dim=7))
