"""The decoder-only transformer: the only place attention is computed.

A pre-LayerNorm GPT (Radford et al. 2019) over bytes, with the positional encoding
as its one pluggable part (see ``suite.encodings.base`` for its hooks).

Tensor letters: B batch, T time (sequence), H heads, Dh head dim, D model dim,
V vocabulary (256 bytes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings import ModelDims, PositionalEncoding
from suite.encodings.base import AttentionWindow
from suite.modeling.flex import flex_attend
from suite.modeling.init import INIT_SCHEMES, TOKEN_EMBEDDING_STD, initialise
from suite.modeling.kv_cache import KVCache


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 256  # byte-level: every byte is a token
    d_model: int = 64  # tiny by default: trains in seconds on a laptop CPU
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256  # 4 x d_model, as in GPT-2
    dropout: float = 0.0  # short runs on fresh data do not overfit; no regularisation
    train_len: int = 64  # training context length; scale s evaluates at s x train_len
    # A fine-tuned extension (suite.plan.grid.TrainingRun.parent) trained at f x train_len with its
    # encoding at scale f, and keeps that scale at every length: a static factor, as position
    # interpolation (Chen et al. 2023) and YaRN (Peng et al. 2023) evaluate their fine-tuned
    # models, with the factor fixed by the fine-tuning length. 1: the scale follows the evaluation length.
    extension_factor: float = 1.0
    init: str = "gpt2"  # how the weights start: a key of INIT_SCHEMES

    def __post_init__(self):
        if self.init not in INIT_SCHEMES:
            raise ValueError(f"init must be one of {sorted(INIT_SCHEMES)}, got {self.init!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.extension_factor < 1:
            raise ValueError(f"extension_factor must be >= 1, got {self.extension_factor}")

    @property
    def dims(self) -> ModelDims:
        return ModelDims(self.d_model, self.n_heads, self.d_model // self.n_heads, self.n_layers, self.train_len,
                         token_embedding_std=TOKEN_EMBEDDING_STD[self.init], d_ff=self.d_ff)


class AttentionPath(str, enum.Enum):
    """The fastest attention computation that is exact for an encoding's hooks."""

    FUSED = "fused"  # scaled_dot_product_attention(is_causal=True): no bias, no score hook, no window
    FLOAT_MASK = "float_mask"  # fused kernel with the bias, window, decay and causal mask as a float mask
    EXPLICIT = "explicit"  # softmax(q k^T) written out: contextual encodings edit the logits
    FLEX = "flex"  # FlexAttention with the relative bias as a score_mod table lookup (GPU; opt-in)
    MIXER = "mixer"  # no attention: the encoding's token mixer in its place (the mixer hook)


EXPLICIT_HOOKS = frozenset({"logits", "score", "sink", "normalize"})  # they edit the logits or the softmax itself


def attention_path(hooks: frozenset[str], window: AttentionWindow | None = None) -> AttentionPath:
    if "mixer" in hooks:
        return AttentionPath.MIXER
    if EXPLICIT_HOOKS & hooks:
        return AttentionPath.EXPLICIT
    if "bias" in hooks or "decay" in hooks or window is not None:
        return AttentionPath.FLOAT_MASK
    return AttentionPath.FUSED


def path_of(encoding: PositionalEncoding, flex: bool = False) -> AttentionPath:
    """The attention path of a layer with this encoding instance, at its current scale;
    ``flex``: FlexAttention where it is exact and the encoding offers a relative bias."""
    path = attention_path(encoding.active_hooks(), encoding.attention_window)
    if flex and path is AttentionPath.FLOAT_MASK and encoding.relative_bias is not None \
            and encoding.active_hooks() <= {"embed", "rotate", "bias", "gate"} and encoding.attention_window is None:
        return AttentionPath.FLEX
    return path


FLEX_MIN_HEAD_DIM = 16  # FlexAttention's fused GPU kernel needs q, k, v of at least this many dimensions

_RECORDED: list[torch.Tensor] | None = None  # see recorded_attention


@contextlib.contextmanager
def recorded_attention():
    """Inside the block, every attention weight matrix [B, H, Tq, Tk] that :func:`attend`
    computes on the explicit path is appended, in call order (layer by layer), to the list
    this yields: the weights as the model uses them (after a sink's column is dropped, or an
    encoding's own normalisation). For diagnostics (suite.evaluation.evaluators.attention_sinks), which
    force the explicit path, the general one, on every layer."""
    global _RECORDED
    outer, _RECORDED = _RECORDED, []
    try:
        # Eager even in a compiled model (a recipe's compile: true): dynamo guards on this
        # module-level list, so a compiled forward recompiled at every recording until its limit
        # of 8 (seen on an H200, 2026-11-26). The weights come out explicitly anyway.
        with torch.compiler.set_stance("force_eager"):
            yield _RECORDED
    finally:
        _RECORDED = outer


QUERY_CHUNK = 256  # queries per chunk when a no-grad forward at a longer length takes a mask path


def causal_float_mask(bias: torch.Tensor, q_pos_idx: torch.Tensor, k_pos_idx: torch.Tensor) -> torch.Tensor:
    """bias [H, Tq, Tk] with -inf where a key lies in the future of its query."""
    future = k_pos_idx[None, :] > q_pos_idx[:, None]  # [Tq, Tk]
    return bias.masked_fill(future, float("-inf"))


def attention_mask(encoding: PositionalEncoding, q_pos: torch.Tensor, k_pos: torch.Tensor, q0: int = 0,
                   k0: int = 0) -> torch.Tensor:
    """The float mask [1, H|1, Tq, Tk] of queries at indices q0 .. q0 + Tq - 1 over keys at
    indices k0 .. k0 + Tk - 1 (their position ids q_pos, k_pos): the encoding's bias where
    it has one, and -inf on future keys and on keys outside the layer's window.
    Causality and windows are by index, whatever the ids."""
    q_idx = torch.arange(q0, q0 + len(q_pos), device=q_pos.device)
    k_idx = torch.arange(k0, k0 + len(k_pos), device=k_pos.device)
    if "bias" in encoding.active_hooks():
        bias = encoding.bias(q_pos, k_pos)  # [H, Tq, Tk]
    else:
        bias = torch.zeros(1, len(q_pos), len(k_pos), device=q_pos.device)  # [1, Tq, Tk]
    mask = causal_float_mask(bias, q_idx, k_idx)
    window = encoding.attention_window
    if window is not None:
        mask = mask.masked_fill(~window.visible(q_idx, k_idx), float("-inf"))
    return mask[None]  # the fast kernel needs 4-D


def attend(q, k, v, encoding: PositionalEncoding, path: AttentionPath, q_pos, k_pos, q0: int = 0,
           mask: torch.Tensor | None = None, dropout: float = 0.0, k0: int = 0,
           decay: tuple[torch.Tensor, torch.Tensor] | None = None, x: torch.Tensor | None = None) -> torch.Tensor:
    """Causal attention [B, H, Tq, Dh] of queries q [B, H, Tq, Dh] at indices q0 .. over
    keys and values [B, H, Tk, Dh] at indices k0 .. k0 + Tk - 1; ``mask`` is
    :func:`attention_mask` when the caller already has it; ``decay``: the cumulative log
    forget values [B, H, Tq] of the queries and [B, H, Tk] of the keys (the decay hook);
    ``x``: the layer's input [B, T, D], for an encoding whose logits read it (the logits hook)."""
    Tq, Tk = q.shape[2], k.shape[2]
    if path is AttentionPath.FLEX:
        return flex_attend(q, k, v, encoding, q_pos, k_pos, q0, k0)
    if path is AttentionPath.FUSED and k0 == 0 and q0 + Tq == Tk and (q0 == 0 or Tq == 1):
        # the whole square (training), or one new query that sees every key (a cached step)
        return F.scaled_dot_product_attention(q, k, v, is_causal=q0 == 0 and Tq > 1, dropout_p=dropout)
    if mask is None:
        mask = attention_mask(encoding, q_pos, k_pos, q0, k0)
    if decay is not None:  # sum_{l=j+1..i} log f_l = c_i - c_j (Lin et al. 2025, Eq. 5): [B, H, Tq, Tk]
        mask = mask + (decay[0][..., :, None] - decay[1][..., None, :])
    if path is not AttentionPath.EXPLICIT:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype), dropout_p=dropout)
    raw = q @ k.transpose(-2, -1) if x is None else encoding.logits(q, k, x, q0, k0)  # [B, H, Tq, Tk]
    scores = raw / math.sqrt(q.shape[-1]) + mask.to(q.dtype)
    scores = encoding.score(q, k, scores, q_pos, k_pos)
    if "sink" in encoding.active_hooks():  # the sink's column in the softmax, dropped after it
        sinks = encoding.sink().to(scores.dtype).view(1, -1, 1, 1).expand(scores.shape[0], -1, scores.shape[2], 1)
        weights = torch.cat((scores, sinks), dim=-1).softmax(dim=-1)[..., :-1]
    else:  # the softmax, unless the encoding has weights of its own (the normalize hook: stick-breaking)
        weights = encoding.normalize(scores, q0, k0)
    if _RECORDED is not None:
        _RECORDED.append(weights.detach())
    return F.dropout(weights, dropout, dropout > 0) @ v


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.dropout = cfg.dropout

    def forward(self, x, encoding: PositionalEncoding, pos, path: AttentionPath, mask=None, chunk: int | None = None,
                cache: KVCache | None = None, layer: int = 0):
        """``mask``: :func:`attention_mask` of the whole sequence, or None (computed here, per
        chunk of ``chunk`` queries when given). ``cache``: keys and values of earlier tokens,
        which x follows (and which it then also holds)."""
        B, T, D = x.shape
        qkv = self.qkv(x)  # [B, T, 3D]
        if "canon" in encoding.active_hooks():  # Canon-B: queries, keys and values mixed along time
            qkv = encoding.canon("B", qkv)
        q, k, v = qkv.split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))  # [B, H, T, Dh]
        q, k = encoding.rotate(q, k, pos, pos)
        # the decay hook's cumulative log forget values [B, H, T] of the queries and of the keys
        c = c_k = encoding.decay(x).cumsum(dim=-1) if "decay" in encoding.active_hooks() else None
        x_in = x if "logits" in encoding.active_hooks() else None  # PaTH's transforms read the layer's input
        k_pos, q0 = pos, 0
        if cache is not None:
            q0, k_pos = cache.length, cache.positions
            k, v = cache.append(layer, k, v)  # [B, H, q0 + T, Dh]
            if c is not None:
                c, c_k = cache.append_decay(layer, c)
        dropout = self.dropout if self.training else 0.0
        if chunk is None or T <= chunk:
            y = attend(q, k, v, encoding, path, pos, k_pos, q0, mask, dropout, decay=None if c is None else (c, c_k), x=x_in)
        else:  # each chunk of queries over the keys it may see: no [H, T, T] held at once
            window, parts = encoding.attention_window, []
            for a in range(0, T, chunk):
                lo, hi = (window.first_key(q0 + a) if window else 0), q0 + a + chunk  # keys [lo, hi)
                parts.append(attend(q[:, :, a : a + chunk], k[:, :, lo:hi], v[:, :, lo:hi], encoding, path,
                                    pos[a : a + chunk], k_pos[lo:hi], q0 + a, None, dropout, k0=lo,
                                    decay=None if c is None else (c[..., a : a + chunk], c_k[..., lo:hi]), x=x_in))
            y = torch.cat(parts, dim=2)  # [B, H, T, Dh]
        if "gate" in encoding.active_hooks():  # gated attention: each token's own gate on its heads' output
            y = encoding.gate(y, x)
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # [B, T, D]


class Block(nn.Module):
    """A pre-LayerNorm block: attention (or, ``attention`` False, the encoding's token mixer:
    the mixer hook) and the MLP, each on the residual stream."""

    def __init__(self, cfg: ModelConfig, attention: bool = True):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg) if attention else None
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, encoding, pos, path, mask=None, chunk=None, cache=None, layer=0):
        if self.attn is None:
            x = x + self.drop(encoding.mixer(self.ln1(x)))
            return x + self.drop(self.mlp(self.ln2(x)))
        if "canon" not in encoding.active_hooks():
            x = x + self.drop(self.attn(self.ln1(x), encoding, pos, path, mask, chunk, cache, layer))
            return x + self.drop(self.mlp(self.ln2(x)))
        # Canon layers (the canon hook): A before attention, C before the MLP, D on its hidden pre-activation
        x = x + self.drop(self.attn(encoding.canon("A", self.ln1(x)), encoding, pos, path, mask, chunk, cache, layer))
        hidden = encoding.canon("D", self.mlp[0](encoding.canon("C", self.ln2(x))))  # [B, T, d_ff]
        return x + self.drop(self.mlp[2](self.mlp[1](hidden)))


def check_transform(transform, encoding: PositionalEncoding):
    """A training-time position transform, if the encoding can read its ids (ValueError if not)."""
    if transform is None:
        return None
    if type(encoding).positions is not PositionalEncoding.positions:
        raise ValueError(f"{type(encoding).__name__} draws its own position ids: it cannot also train on a transform's")
    if transform.continuous and not encoding.continuous_positions:
        raise ValueError(f"{type(encoding).__name__} reads integer position ids; the {type(transform).__name__} transform "
                         "draws real-valued ones (an encoding that takes them says continuous_positions = True)")
    limit = encoding.max_length()
    if limit is not None and transform.max_position > limit:
        raise ValueError(f"{type(encoding).__name__} represents {limit} positions; the training transform draws "
                         f"ids up to {transform.max_position}")
    return transform


class Transformer(nn.Module):
    """Byte-level decoder. ``make_encoding(dims)`` builds one encoding instance for the
    model's :class:`ModelDims`; the model makes one per layer (``dims.layer`` = its layer)
    when the encoding class says ``per_layer``, else shares one. Each layer takes the
    attention path of its own instance (hybrid schedules mix fused and masked layers).

    Long sequences: a forward without autograd (evaluation) longer than ``query_chunk``
    on a mask path (a bias or a score hook) processes the queries of every layer in
    chunks of ``query_chunk``, each over the keys up to its last query, so no layer holds
    the [H, T, T] bias or logits of all heads at once: memory grows linearly with T.
    The bias is then computed per chunk and layer instead of once per forward. Every
    hook acts per query (the contract gives q_pos and k_pos separately), so the chunks
    give the same numbers (tests/modeling/test_model.py checks every spec).

    ``position_transform`` (suite.encodings.position_transforms): the ids a training forward reads
    (PoSE, randomized ids); evaluation reads the encoding's own."""

    def __init__(self, cfg: ModelConfig, make_encoding, position_transform=None):
        super().__init__()
        self.cfg = cfg
        self.query_chunk = QUERY_CHUNK
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        # The class (and so per_layer) is known only once the first instance exists (a wrapper
        # takes it from what it wraps), so the first is built for layer 0, and told it serves
        # every layer when it turns out to be shared.
        first = make_encoding(dataclasses.replace(cfg.dims, layer=0))
        self.per_layer = type(first).per_layer
        if not self.per_layer:
            first.dims = cfg.dims
        rest = [make_encoding(dataclasses.replace(cfg.dims, layer=i)) for i in range(1, cfg.n_layers)] if self.per_layer else []
        self.encodings = nn.ModuleList([first] + rest)
        self.flex = False  # FlexAttention for relative biases: see use_flex_attention
        self.paths = [path_of(self.encoding_for(i)) for i in range(cfg.n_layers)]
        self.position_transform = check_transform(position_transform, first)
        # a layer whose encoding mixes tokens itself (the mixer hook) has no attention of the model's
        self.blocks = nn.ModuleList(Block(cfg, attention="mixer" not in self.encoding_for(i).active_hooks())
                                    for i in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        if cfg.extension_factor != 1:
            self.set_scale(1)  # a fine-tuned extension starts (and trains) at its factor
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        initialise(self, cfg.init)  # GPT-2's, head tied, or PyTorch's own (suite.modeling.init)

    def set_scale(self, scale: float) -> None:
        """Evaluation scale s for every encoding; a fine-tuned extension keeps its factor
        (ModelConfig.extension_factor) whatever s."""
        if self.cfg.extension_factor != 1:
            scale = self.cfg.extension_factor
        for enc in self.encodings:
            enc.set_scale(scale)
        # an encoding may use other hooks at another scale (dynamic scaling: the score hook beyond L)
        self.paths = [path_of(self.encoding_for(i), self.flex) for i in range(self.cfg.n_layers)]

    def use_flex_attention(self, on: bool = True) -> None:
        """Run relative-bias encodings through FlexAttention (:func:`flex_attend`): exact,
        and on a GPU fused and without the [H, T, T] bias. Never with dropout (FlexAttention
        has none), nor at a head dimension below 16, which the fused kernel does not take
        (torch 2.11 on an H200: "NYI: embedding dimension ... must be at least 16"); layers
        without a relative bias keep their own path."""
        self.flex = on and self.cfg.dropout == 0 and self.cfg.d_model // self.cfg.n_heads >= FLEX_MIN_HEAD_DIM
        self.paths = [path_of(self.encoding_for(i), self.flex) for i in range(self.cfg.n_layers)]

    @property
    def path(self) -> AttentionPath:
        """The attention path every layer takes (a schedule whose layers differ has none:
        see :attr:`path_name`); setting it forces one path on every layer."""
        if len(set(self.paths)) > 1:
            raise ValueError(f"layers take different attention paths: {self.path_name}")
        return self.paths[0]

    @path.setter
    def path(self, path: AttentionPath) -> None:
        """Every attention layer's path; a layer without attention (the mixer hook) keeps its mixer."""
        self.paths = [p if p is AttentionPath.MIXER else path for p in self.paths]

    @property
    def path_name(self) -> str:
        """The attention paths of the layers, for records: "fused", or "fused+float_mask"."""
        return "+".join(p.value for p in sorted(set(self.paths), key=list(AttentionPath).index))

    def encoding_for(self, layer: int) -> PositionalEncoding:
        return self.encodings[layer if self.per_layer else 0]

    @property
    def cacheable(self) -> bool:
        """Whether :meth:`extend` with a :class:`KVCache` is exact for this encoding at this scale."""
        return all(enc.cacheable for enc in self.encodings)

    def features(self, idx: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """Final hidden states [B, T, D] for token ids idx [B, T] (that follow the cache's tokens)."""
        T = idx.shape[1]
        first = self.encodings[0]
        start = 0 if cache is None else cache.length
        if self.training and self.position_transform is not None and cache is None:
            pos = self.position_transform(T, idx.device)  # [T] training ids (suite.encodings.position_transforms)
        else:
            pos = first.positions(start + T, idx.device)[start:]  # [T] position ids
        if cache is not None:
            cache.positions = pos if cache.positions is None else torch.cat((cache.positions, pos))
        x = first.embed(self.tok(idx), pos)  # [B, T, D]
        long = T > self.query_chunk and not torch.is_grad_enabled()
        shared_mask = None  # a shared encoding's mask, computed once per forward
        for i, block in enumerate(self.blocks):
            enc, path = self.encoding_for(i), self.paths[i]
            # kernels that never hold the T x T square, and a token mixer: no chunks, no mask
            fused = path in (AttentionPath.FUSED, AttentionPath.FLEX, AttentionPath.MIXER)
            chunk = self.query_chunk if long and not fused else None
            mask = None
            if not (fused or chunk is not None or cache is not None):
                if self.per_layer:
                    mask = attention_mask(enc, pos, pos)
                else:
                    shared_mask = attention_mask(enc, pos, pos) if shared_mask is None else shared_mask
                    mask = shared_mask
            x = block(x, enc, pos, path, mask, chunk, cache, i)
        if cache is not None:
            cache.length += T
        return self.ln_f(x)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Next-byte logits [B, T, V]."""
        return self.head(self.features(idx))

    def extend(self, idx: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Next-byte logits [B, Tn, V] of tokens idx [B, Tn] that follow the ``cache.length``
        tokens ``cache`` holds (an empty cache: a sequence's start), reading only the new
        tokens; the cache then holds them too. The same numbers as :meth:`forward` over
        the whole sequence, for an encoding that says it is :attr:`~PositionalEncoding.cacheable`."""
        if not self.cacheable:
            raise ValueError("this encoding is not cacheable at this scale: re-read the whole window with forward()")
        return self.head(self.features(idx, cache))

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
