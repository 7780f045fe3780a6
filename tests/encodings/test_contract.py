"""The plugin contract, for every file in encodings/ (new files are covered automatically):
it loads, runs in a tiny model, is causal in training and evaluation, deterministic,
trainable, and takes the attention path its hooks call for."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from suite.encodings import ENCODINGS, AttentionWindow, ScaleBehaviour
from suite.model import AttentionPath, attention_path

from .helpers import CFG, SPECS, build_model, spec

NAMES = [p.stem for p in SPECS]
L = CFG.train_len

# The fastest exact path per family; exceptions are listed by name with the reason.
FAMILY_PATH = {"none": AttentionPath.FUSED, "absolute": AttentionPath.FUSED, "rotary": AttentionPath.FUSED,
               "additive": AttentionPath.FUSED, "bias": AttentionPath.FLOAT_MASK, "contextual": AttentionPath.EXPLICIT,
               "decay": AttentionPath.FLOAT_MASK}
PATH_EXCEPTIONS = {"rerope": AttentionPath.EXPLICIT, "rerope-leaky": AttentionPath.EXPLICIT}  # exact via the score hook


def expected_path(name: str) -> AttentionPath:
    s = spec(name)
    if name in PATH_EXCEPTIONS:
        return PATH_EXCEPTIONS[name]
    if s.family == "wrapper":  # a wrapper takes the path of what it wraps
        inner = s.resolved_params().inner
        return attention_path(ENCODINGS.get(inner).hooks())
    return FAMILY_PATH[s.family]


def lengths(model) -> list[int]:
    """The training length, and twice it where the encoding can represent it."""
    limit = model.encodings[0].max_length()
    return [T for T in (L, 2 * L) if limit is None or T <= limit]


@pytest.fixture(scope="module", params=NAMES)
def name(request):
    return request.param


STATED = {ScaleBehaviour.EXTRAPOLATE: "extrapolates", ScaleBehaviour.ADJUST: "training-free adjustment",
          ScaleBehaviour.NOT_APPLICABLE: "not applicable"}


def test_spec_states_the_scale_behaviour_the_code_declares(name):
    """The description says 'Scale behaviour: <what the encoding declares>'."""
    encoding = build_model(name).encodings[0]
    behaviour = encoding.scale_behaviour
    assert isinstance(behaviour, ScaleBehaviour)
    _, _, stated = " ".join(spec(name).description.split()).lower().partition("scale behaviour: ")
    assert stated.startswith(STATED[behaviour]), f"{name}: declares {behaviour.value}, says {stated!r}"
    if behaviour is ScaleBehaviour.NOT_APPLICABLE:
        assert encoding.max_length() is not None


def test_attention_path(name):
    model = build_model(name)
    if spec(name).family == "hybrid":  # each layer the path of its own encoding and window
        entries = spec(name).resolved_params().layers
        expected = [attention_path(ENCODINGS.get(e.impl).hooks(), AttentionWindow(e.window, e.window_kind) if e.window else None)
                    for e in (entries[i % len(entries)] for i in range(CFG.n_layers))]
        assert model.paths == expected
        return
    assert model.path is expected_path(name)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_output_shape(name, mode):
    model = build_model(name).train(mode == "train")
    for T in lengths(model):
        model.set_scale(T / L)
        assert model(torch.randint(0, 256, (2, T))).shape == (2, T, CFG.vocab_size)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_causal(name, mode):
    """d logits[:, t] / d input embeddings[:, t'] is exactly 0 for every t' > t."""
    model = build_model(name).train(mode == "train")
    captured = {}
    model.tok.register_forward_hook(lambda module, args, out: captured.__setitem__("emb", out))
    gen = torch.Generator().manual_seed(1)
    for T in lengths(model):
        model.set_scale(T / L)
        torch.manual_seed(2)
        logits = model(torch.randint(0, 256, (1, T), generator=gen))
        weights = torch.randn(T, CFG.vocab_size, generator=gen)
        for t in range(T):
            (grad,) = torch.autograd.grad((logits[0, t] * weights[t]).sum(), captured["emb"], retain_graph=True)
            assert torch.count_nonzero(grad[0, t + 1 :]) == 0, f"position {t} sees the future (T={T}, {mode})"
            assert grad[0, t].abs().sum() > 0


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_deterministic(name, mode):
    idx = torch.randint(0, 256, (2, L))

    def run():
        model = build_model(name, seed=3).train(mode == "train")
        torch.manual_seed(4)  # e.g. randomized positions draw from the global generator in training
        return model(idx)

    assert torch.equal(run(), run())


def test_every_parameter_learns(name):
    model = build_model(name).train()
    idx = torch.randint(0, 256, (2, L + 1))
    F.cross_entropy(model(idx[:, :-1]).transpose(1, 2), idx[:, 1:]).backward()
    for param_name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, f"{param_name} gets no gradient"


def test_an_optimizer_step_keeps_everything_finite(name):
    model = build_model(name).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(2):
        idx = torch.randint(0, 256, (2, L + 1))
        loss = F.cross_entropy(model(idx[:, :-1]).transpose(1, 2), idx[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())
    model.eval()
    for T in lengths(model):
        model.set_scale(T / L)
        assert torch.isfinite(model(torch.randint(0, 256, (1, T)))).all()


def test_layer_sharing(name):
    """per_layer encodings get one instance per layer; shared ones compute a bias once per forward."""
    model = build_model(name)
    first = model.encodings[0]
    assert len(model.encodings) == (CFG.n_layers if type(first).per_layer else 1)
    if "bias" in type(first).hooks() and not type(first).per_layer:
        calls = []
        original = first.bias
        first.bias = lambda q, k: calls.append(1) or original(q, k)
        model(torch.randint(0, 256, (1, 8)))
        assert calls == [1]
