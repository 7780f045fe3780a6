"""FoPE against the authors' FourierEmbedding (golden values from scripts/golden/fope.py,
which runs TsinghuaC3I/Fourier-Position-Embedding's classes) and its initialisation."""

from __future__ import annotations

import math

import torch

from suite.encodings import ENCODINGS
from suite.modeling.model import ModelConfig

from tests.encodings.helpers import golden

Fope = ENCODINGS.get("fope")


def test_rotation_is_the_authors():
    """With the reference's (random) coefficients loaded, our rotation of the queries is
    the authors', inside and beyond the training length."""
    g = golden("fope")
    cfg = g["config"]
    dims = ModelConfig(d_model=cfg["d_model"], n_heads=cfg["n_heads"], train_len=cfg["max_sequence_length"]).dims
    enc = Fope(Fope.Params(), dims)
    torch.testing.assert_close(enc.inv_freq, torch.tensor(g["inv_freq"]), rtol=1e-6, atol=0)
    assert enc.output_dim == g["output_dim"] and len(enc.inv_freq) == g["input_dim"]
    with torch.no_grad():
        enc.sin_coef.copy_(torch.tensor(g["sin_coef"]))
        enc.cos_coef.copy_(torch.tensor(g["cos_coef"]))
    q = torch.tensor(g["q"])[None]
    rotated, _ = enc.rotate(q, q, torch.arange(q.shape[2]), torch.arange(q.shape[2]))
    torch.testing.assert_close(rotated[0], torch.tensor(g["rotated"]), rtol=1e-5, atol=1e-5)


def test_coefficients_are_identity_plus_xavier_noise_and_fixed():
    g = golden("fope")
    dims = ModelConfig(d_model=256, n_heads=4, train_len=64).dims
    torch.manual_seed(0)
    enc = Fope(Fope.Params(), dims)
    n_in, n_out = enc.sin_coef.shape[1:]
    assert not list(enc.parameters()) and {"sin_coef", "cos_coef"} <= set(enc.state_dict())  # fixed, saved
    noise = enc.sin_coef.detach() - torch.eye(n_in, n_out)
    fan_in, fan_out = n_in * n_out, dims.n_heads * n_out  # xavier on [H, D', d], as torch computes it
    expected_std = 0.3 * math.sqrt(2.0 / (fan_in + fan_out))
    assert abs(noise.std().item() - expected_std) / expected_std < 0.3
    assert g["config"]["fourier_init_norm_gain"] == 0.3


def test_every_kept_frequency_completes_a_period_within_l():
    enc = Fope(Fope.Params(), ModelConfig(d_model=128, n_heads=4, train_len=64).dims)
    assert bool((2 * math.pi / enc.inv_freq <= 64).all())
