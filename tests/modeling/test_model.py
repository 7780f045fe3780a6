"""The transformer: attention paths are exact, and the model is causal."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.rotary import RotaryParams
from suite.encodings.base import NoParams
from suite.modeling.model import AttentionPath, ModelConfig, Transformer

CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=16)


def model_with(impl: str, params=None) -> Transformer:
    torch.manual_seed(0)
    cls = ENCODINGS.get(impl)
    return Transformer(CFG, lambda dims: cls(params or cls.Params(), dims)).eval()


@pytest.mark.parametrize("impl, path", [("none", AttentionPath.FUSED), ("sinusoidal", AttentionPath.FUSED),
                                        ("rotary", AttentionPath.FUSED), ("alibi", AttentionPath.FLOAT_MASK)])
def test_attention_path_follows_hooks(impl, path):
    assert model_with(impl).path is path


@pytest.mark.parametrize("impl", ["none", "rotary", "alibi"])
def test_every_attention_path_computes_the_same_function(impl):
    """The fused and float-mask kernels equal softmax(q k^T / sqrt(Dh) + bias) written out."""
    model = model_with(impl)
    idx = torch.randint(0, 256, (2, 24))
    fast = model(idx)
    model.path = AttentionPath.EXPLICIT  # same weights, explicit attention
    torch.testing.assert_close(model(idx), fast, rtol=1e-4, atol=1e-5)


def test_alibi_bias_is_computed_once_per_forward():
    model = model_with("alibi")
    calls = []
    enc = model.encodings[0]
    original = enc.bias
    enc.bias = lambda q, k: calls.append(1) or original(q, k)
    model(torch.randint(0, 256, (1, 8)))
    assert len(calls) == 1 and len(model.encodings) == 1


def test_weights_are_tied_and_counted_once():
    model = model_with("rotary", RotaryParams())
    assert model.head.weight is model.tok.weight
    assert model.num_params() == sum(p.numel() for p in set(model.parameters()))


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(TypeError, match="expects"):
        ENCODINGS.get("rotary")(NoParams(), CFG.dims)


# -- long sequences in query chunks ------------------------------------------------------

from tests.encodings.helpers import SPECS, build_model  # noqa: E402

SPEC_NAMES = [p.stem for p in SPECS]


def eval_length(model, scale: int = 4) -> int:
    """scale x L, or the longest length the encoding can represent."""
    limit = model.encodings[0].max_length()
    return min(scale * CFG.train_len, limit or scale * CFG.train_len)


@pytest.mark.parametrize("name", SPEC_NAMES)
def test_queries_in_chunks_give_the_same_numbers(name):
    """Every spec: a no-grad forward with queries in chunks of 7 (uneven: the last chunk is
    shorter) equals the forward of the whole square, within 1e-5."""
    model = build_model(name, seed=1).eval()
    with torch.no_grad():
        for block in model.blocks:  # sharper attention, so that a wrong key or bias would show
            if block.attn is not None:  # a token mixer's layer has none (the mixer hook)
                block.attn.qkv.weight.mul_(8)
    T = eval_length(model)
    idx = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(0))

    def forward(chunk: int) -> torch.Tensor:
        model.query_chunk = chunk
        model.set_scale(T / CFG.train_len)  # also re-seeds evaluation draws (randomized positions)
        with torch.no_grad():
            return model(idx)

    whole = forward(10**9)
    torch.testing.assert_close(forward(7), whole, rtol=0, atol=1e-5)


def test_chunks_compute_the_bias_of_each_chunk_over_the_keys_it_sees():
    model = model_with("alibi")
    model.query_chunk = 8
    shapes = []
    enc = model.encodings[0]
    original = enc.bias
    enc.bias = lambda q, k: shapes.append((len(q), len(k))) or original(q, k)
    with torch.no_grad():
        model(torch.randint(0, 256, (1, 20)))
    assert shapes == [(8, 8), (8, 16), (4, 20)] * CFG.n_layers  # per layer; causal: keys up to the chunk's end
    shapes.clear()
    model(torch.randint(0, 256, (1, 20)))  # with autograd (training) the whole square, once per forward
    assert shapes == [(20, 20)]


def test_gpt2_init_ties_the_head_and_pytorch_init_keeps_the_modules_defaults():
    """A size's ``init`` (INIT_SCHEMES): GPT-2's std 0.02 with the head tied to the
    embedding, or PyTorch's own defaults (nn.Embedding N(0, 1), nn.Linear uniform within
    1/sqrt(fan_in)) with the head untied."""
    torch.manual_seed(0)
    none = ENCODINGS.get("none")
    gpt2 = Transformer(ModelConfig(d_model=64, n_layers=2, n_heads=4, d_ff=256), lambda d: none(none.Params(), d))
    torch.manual_seed(0)
    pytorch = Transformer(ModelConfig(d_model=64, n_layers=2, n_heads=4, d_ff=256, init="pytorch"),
                          lambda d: none(none.Params(), d))
    assert gpt2.head.weight is gpt2.tok.weight
    assert gpt2.tok.weight.std().item() == pytest.approx(0.02, rel=0.05)
    assert pytorch.head.weight is not pytorch.tok.weight
    assert pytorch.tok.weight.std().item() == pytest.approx(1.0, rel=0.05)
    for name, p in pytorch.blocks.named_parameters():
        if p.dim() == 2:  # nn.Linear: kaiming_uniform_(a=sqrt(5)) is uniform within 1/sqrt(fan_in)
            assert p.abs().max().item() <= p.shape[1] ** -0.5, name
            assert p.abs().max().item() > 0.9 * p.shape[1] ** -0.5, name
    with pytest.raises(ValueError, match="init must be one of"):
        ModelConfig(init="xavier")
