"""Canon layers against their author's code (golden values from scripts/golden/canon.py, which
runs facebookresearch/PhysicsLM4's create_canon and apply_canon), and where the model puts them."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS, ModelDims
from suite.modeling.model import ModelConfig, Transformer
from tests.encodings.helpers import CFG, build_model, golden

Canon = ENCODINGS.get("canon")
DIMS = ModelDims(32, 4, 8, 2, 16, layer=0, d_ff=64)  # the golden's widths: A, C 32, B 96, D 64


@pytest.mark.parametrize("index", range(5))
def test_matches_the_authors_canon_layer(index):
    case = golden("canon")["cases"][index]
    enc = Canon(Canon.Params(sites=case["site"], kernel=case["kernel"], activation=case["activation"]), DIMS).double()
    conv = enc.convs[case["site"]]
    assert conv.weight.shape[0] == case["width"]
    with torch.no_grad():
        conv.weight.copy_(torch.tensor(case["weight"], dtype=torch.float64))
        out = enc.canon(case["site"], torch.tensor(case["h"], dtype=torch.float64))
    torch.testing.assert_close(out, torch.tensor(case["out"], dtype=torch.float64), rtol=0, atol=1e-10)


def test_initialised_as_conv1d():
    """nn.Conv1d's own draw, uniform within 1/sqrt(kernel) = 0.5 (std ~0.29), which the author keeps."""
    enc = Canon(Canon.Params(), DIMS)
    for conv in enc.convs.values():
        assert conv.weight.abs().max() <= 0.5 and 0.2 < conv.weight.std() < 0.4


def models(cfg: ModelConfig = CFG):
    """canon-nope and NoPE with the same block weights."""
    canon, nope = build_model("canon-nope", cfg=cfg), build_model("nope", cfg=cfg)
    nope.load_state_dict({k: v for k, v in canon.state_dict().items() if not k.startswith("encodings.")})
    return canon.eval(), nope.eval()


def test_zero_filters_are_the_identity_and_every_site_acts():
    canon, nope = models()
    idx = torch.randint(0, 256, (2, 20), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        trained = {k: v.clone() for k, v in canon.state_dict().items() if ".convs." in k}
        for k in trained:
            canon.state_dict()[k].zero_()
        torch.testing.assert_close(canon(idx), nope(idx), rtol=0, atol=1e-6)  # residual: h + 0
        for k, v in trained.items():  # each site alone changes the logits: the model applies it
            canon.state_dict()[k].copy_(v)
            assert not torch.allclose(canon(idx), nope(idx), atol=1e-4), k
            canon.state_dict()[k].zero_()


def test_local_order_without_position_ids():
    """Canon-A's output at a token depends on the order of the K - 1 tokens before it, though no
    position id is read: swapping two of them changes it. Not cacheable, unlike NoPE."""
    canon, nope = models()
    idx = torch.randint(0, 256, (1, 12), generator=torch.Generator().manual_seed(1))
    swapped = idx.clone()
    swapped[0, [9, 10]] = idx[0, [10, 9]]
    with torch.no_grad():
        a, b = (canon.encodings[0].canon("A", canon.blocks[0].ln1(canon.tok(t))) for t in (idx, swapped))
    assert not torch.allclose(a[0, 11], b[0, 11])
    torch.testing.assert_close(a[0, :9], b[0, :9])  # earlier tokens never see the swap
    assert not canon.cacheable and nope.cacheable


def test_canon_d_needs_the_mlp_width():
    with pytest.raises(ValueError, match="d_ff"):
        Canon(Canon.Params(), ModelDims(32, 4, 8, 2, 16, layer=0))
    assert set(Canon(Canon.Params(sites="AC"), ModelDims(32, 4, 8, 2, 16, layer=0)).convs) == {"A", "C"}


def test_wrapped_in_a_schedule_the_canon_layers_stay():
    schedule = ENCODINGS.get("schedule")
    params = schedule.Params(layers=({"impl": "canon", "params": {"inner": "rotary", "inner_params": {"base": 10000}}},
                                     {"impl": "none"}))
    model = Transformer(CFG, lambda d: schedule(params, d))
    assert model.encodings[0].active_hooks() == {"canon", "rotate"} and not model.encodings[1].active_hooks()
    model(torch.randint(0, 256, (1, 8)))
