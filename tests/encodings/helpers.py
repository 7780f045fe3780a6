"""Shared by the encoding tests: golden files, tiny dims and models."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import torch

from suite.encodings import ModelDims
from suite.modeling.model import ModelConfig, Transformer
from suite.specs import load_encoding

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted((REPO / "encodings").glob("*.yaml"))
CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=16)


@cache
def golden(name: str) -> dict:
    """tests/golden/<name>.json, written by scripts/golden/*.py."""
    return json.loads((Path(__file__).parents[1] / "golden" / f"{name}.json").read_text())


def dims(head_dim: int = 16, n_heads: int = 1, train_len: int = 64) -> ModelDims:
    return ModelDims(d_model=head_dim * n_heads, n_heads=n_heads, head_dim=head_dim, n_layers=1, train_len=train_len)


def spec(name: str):
    return load_encoding(REPO / "encodings" / f"{name}.yaml")


def encoding(name: str, d: ModelDims | None = None, **overrides):
    """The encoding of encodings/<name>.yaml with params ``overrides`` changed."""
    s = spec(name)
    impl = s.implementation()
    return impl(impl.Params(**{**s.params, **overrides}), d or dims())


def build_model(name: str, seed: int = 0, cfg: ModelConfig = CFG) -> Transformer:
    s = spec(name)
    impl, params = s.implementation(), s.resolved_params()
    torch.manual_seed(seed)
    return Transformer(cfg, lambda dims: impl(params, dims))


def logits_matrix(enc, q_vec: torch.Tensor, k_vec: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """q.k [T, T] after ``rotate``, with the same q and the same k at every position."""
    T = len(pos)
    q = q_vec.expand(1, 1, T, -1).clone()  # [1, 1, T, Dh]
    k = k_vec.expand(1, 1, T, -1).clone()
    q, k = enc.rotate(q, k, pos, pos)
    return (q @ k.transpose(-2, -1))[0, 0]


def explicit_attention(enc, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Attention weights [T, T] of one head's q, k [T, Dh] at positions 0..T-1 as the model's
    explicit path computes them: rotate, q k^T / sqrt(Dh) with the causal mask, the score
    hook, softmax."""
    pos = torch.arange(q.shape[0])
    q_rot, k_rot = enc.rotate(q[None, None], k[None, None], pos, pos)
    mask = torch.full((len(pos), len(pos)), float("-inf")).triu(1)
    scores = q_rot @ k_rot.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask
    return enc.score(q_rot, k_rot, scores, pos, pos).softmax(dim=-1)[0, 0]
