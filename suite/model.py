"""The decoder-only transformer: the only place attention is computed.

A pre-LayerNorm GPT (Radford et al. 2019) over bytes, with the positional encoding
as its one pluggable part (see ``suite.encodings.base`` for the four hooks).

Tensor letters: B batch, T time (sequence), H heads, Dh head dim, D model dim,
V vocabulary (256 bytes).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .encodings import ModelDims, PositionalEncoding


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 256  # byte-level: every byte is a token
    d_model: int = 64  # tiny by default: trains in seconds on a laptop CPU
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256  # 4 x d_model, as in GPT-2
    dropout: float = 0.0  # short runs on fresh data do not overfit; no regularisation
    train_len: int = 64  # training context length; scale s evaluates at s x train_len

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")

    @property
    def dims(self) -> ModelDims:
        return ModelDims(self.d_model, self.n_heads, self.d_model // self.n_heads, self.n_layers, self.train_len)


class AttentionPath(str, enum.Enum):
    """The fastest attention computation that is exact for an encoding's hooks."""

    FUSED = "fused"  # scaled_dot_product_attention(is_causal=True): no bias, no score hook
    FLOAT_MASK = "float_mask"  # fused kernel with the bias + causal mask as a float mask
    EXPLICIT = "explicit"  # softmax(q k^T) written out: contextual encodings edit the logits


def attention_path(hooks: frozenset[str]) -> AttentionPath:
    if "score" in hooks:
        return AttentionPath.EXPLICIT
    if "bias" in hooks:
        return AttentionPath.FLOAT_MASK
    return AttentionPath.FUSED


def causal_float_mask(bias: torch.Tensor, q_pos_idx: torch.Tensor, k_pos_idx: torch.Tensor) -> torch.Tensor:
    """bias [H, Tq, Tk] with -inf where a key lies in the future of its query."""
    future = k_pos_idx[None, :] > q_pos_idx[:, None]  # [Tq, Tk]
    return bias.masked_fill(future, float("-inf"))


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.dropout = cfg.dropout

    def forward(self, x, encoding: PositionalEncoding, pos, path: AttentionPath, mask):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))  # [B, H, T, Dh]
        q, k = encoding.rotate(q, k, pos, pos)
        dropout = self.dropout if self.training else 0.0
        if path is AttentionPath.FUSED:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout)
        elif path is AttentionPath.FLOAT_MASK:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype), dropout_p=dropout)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1]) + mask.to(q.dtype)  # [B, H, T, T]
            scores = encoding.score(q, k, scores, pos, pos)
            y = F.dropout(scores.softmax(dim=-1), dropout, self.training) @ v
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # [B, T, D]


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, encoding, pos, path, mask):
        x = x + self.drop(self.attn(self.ln1(x), encoding, pos, path, mask))
        return x + self.drop(self.mlp(self.ln2(x)))


class Transformer(nn.Module):
    """Byte-level decoder. ``make_encoding()`` builds one encoding instance; the model
    makes one per layer when the encoding class says ``per_layer``, else shares one."""

    def __init__(self, cfg: ModelConfig, make_encoding):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        first = make_encoding()
        self.per_layer = type(first).per_layer
        self.encodings = nn.ModuleList([first] + [make_encoding() for _ in range(cfg.n_layers - 1)] if self.per_layer else [first])
        self.path = attention_path(first.active_hooks())
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.head.weight = self.tok.weight  # weight tying, as in GPT-2
        for part in (self.tok, self.blocks):  # not the encodings: they initialise their own parameters
            part.apply(self._init_weights)
        for block in self.blocks:  # GPT-2: residual projections scaled by 1/sqrt(2 * n_layers)
            for proj in (block.attn.out, block.mlp[2]):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layers))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def set_scale(self, scale: float) -> None:
        for enc in self.encodings:
            enc.set_scale(scale)
        # an encoding may use other hooks at another scale (dynamic scaling: the score hook beyond L)
        self.path = attention_path(self.encodings[0].active_hooks())

    def encoding_for(self, layer: int) -> PositionalEncoding:
        return self.encodings[layer if self.per_layer else 0]

    def _mask(self, encoding, pos, idx_pos):
        if self.path is AttentionPath.FUSED:
            return None
        if self.path is AttentionPath.FLOAT_MASK or "bias" in encoding.active_hooks():
            return causal_float_mask(encoding.bias(pos, pos), idx_pos, idx_pos)[None]  # [1, H, T, T]: the fast kernel needs 4-D
        zeros = torch.zeros(1, len(pos), len(pos), device=pos.device)
        return causal_float_mask(zeros, idx_pos, idx_pos)[None]  # [1, 1, T, T]

    def features(self, idx: torch.Tensor) -> torch.Tensor:
        """Final hidden states [B, T, D] for token ids idx [B, T]."""
        T = idx.shape[1]
        first = self.encodings[0]
        pos = first.positions(T, idx.device)  # [T] position ids
        idx_pos = torch.arange(T, device=idx.device)  # causality is by index, whatever the ids
        x = first.embed(self.tok(idx), pos)  # [B, T, D]
        shared_mask = None if self.per_layer else self._mask(first, pos, idx_pos)  # once per forward
        for i, block in enumerate(self.blocks):
            enc = self.encoding_for(i)
            mask = shared_mask if not self.per_layer else self._mask(enc, pos, idx_pos)
            x = block(x, enc, pos, self.path, mask)
        return self.ln_f(x)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Next-byte logits [B, T, V]."""
        return self.head(self.features(idx))

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
