"""GRAPE: Group Representational Position Encoding (Zhang et al., ICLR 2026, arXiv 2512.07805).

GRAPE writes a position n as a group element G(n) = exp(n omega L) acting on queries and keys.
Two of its families fit this benchmark's hooks; both are checked against the authors' code
(model-architectures/GRAPE@f5b539f, ``model/``) by scripts/golden/grape.py.

* **GRAPE-M, non-contextual** (Sec. 3.1, Eq. 3.1; ``llama-mha-grape-m-nonctx.py``,
  ``MSGRAPECommuting``, lines 46-154): d/2 commuting rank-2 generators on fixed coordinate
  planes, G(n) = blockdiag(R2(n theta_1), ..., R2(n theta_{d/2})), so q_i^T G(j - i) k_j
  depends on j - i alone (Sec. 2.2). Unlike RoPE the frequencies are learned:
  theta = exp(log_freq / s), log_freq initialised to s log(base^(-2i/d)) (RoPE's spectrum,
  base 10000) with s = 16, the authors' ``grape_log_freq_scale`` "lr-scaling trick" (a step
  on log_freq moves log theta 16 times less). One spectrum per layer, shared by its heads
  (``grape_share_across_heads: True``); ``per_head`` gives each head its own.
  Convention: half-split planes (i, i + d/2) as the authors' ``apply_rotary_emb``, not the
  paper's (2i - 1, 2i). The authors rotate by -n theta (``y1 = x1 cos + x2 sin``); we rotate by
  +n theta as our RoPE does, so that GRAPE-M at initialisation is exactly ``rope`` (the
  paper's Prop. 3.1). The two differ by negating the second half of every head's q and k,
  which the projections absorb: their model with W_q, W_k is ours with those rows negated.

* **GRAPE-A** (Sec. 4.1, Eq. 4.6; ``llama-mha-grape-a-{querykeygated,keygated,querygated}.py``,
  ``*GatedAdditiveBias``, lines 41-134 of the first): a rank-1 unipotent action in
  GL(d + 2) that adds a linear-in-offset bias with a content-gated slope,

      logit_ij += (j - i) w_h [softplus(v_h^T q_i / sqrt(d)) + softplus(u_h^T k_j / sqrt(d))],

  with the query gate, the key gate or both (``gate``: GRAPE-A-Q, -K, -QK of the paper's
  Table 1). As the authors' code, not the paper's formula: w_h = softplus(omega_h) * m_h with
  m_h ALiBi's slope of head h and softplus(omega_h) initialised to ``omega_init`` = 1; u_h and
  v_h drawn N(0, 1/d) and used as unit vectors (``u_l2_norm: True``); the gates are read
  from q and k as the score hook receives them (the authors' after their QK-RMSNorm, which
  PosBench's model does not have), on NoPE as in their runs. The distance is i - j of the
  position ids, 0 for future keys (masked anyway). With every gate constant the bias is
  ALiBi's (the paper's Sec. 4.2 and 5, "Exact ALiBi").

GRAPE-AP (Sec. 5) and contextual GRAPE-M, which read the layer's input, are in
suite.encodings.grape_contextual (the ``logits`` hook).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import default_inv_freq, rotate_half_split
from suite.encodings.simple import alibi_slopes

UNIT_EPS = 1e-6  # the authors' keygated_u_l2_eps: F.normalize's floor on |u|


# -- GRAPE-M ------------------------------------------------------------------------


@dataclass(frozen=True)
class GrapeMParams:
    base: float = 10000.0  # RoPE's base: the initial log-uniform spectrum
    log_freq_scale: float = 16.0  # s in theta = exp(log_freq / s): the authors' grape_log_freq_scale
    per_head: bool = False  # one spectrum per head; the authors' runs share one across a layer's heads

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if not self.log_freq_scale > 0:
            raise ValueError(f"log_freq_scale must be > 0, got {self.log_freq_scale}")


def initial_log_freq(head_dim: int, base: float, log_freq_scale: float) -> torch.Tensor:
    """s log theta_i with theta_i = base^(-2i/d), i = 0 .. d/2 - 1: RoPE's spectrum (float32,
    as the authors build it)."""
    return default_inv_freq(head_dim, base).float().log() * log_freq_scale


def grape_m_angles(pos: torch.Tensor, log_freq: torch.Tensor, log_freq_scale: float) -> torch.Tensor:
    """n theta_i [..., T, d/2] of positions ``pos`` [T] with theta = exp(log_freq / s), log_freq
    [d/2] (shared) or [H, d/2] (per head)."""
    freq = torch.exp(log_freq / log_freq_scale)
    return pos.to(freq.dtype)[:, None] * freq[..., None, :]


@ENCODINGS.register("grape_m")
class GrapeM(PositionalEncoding):
    """Multiplicative GRAPE, non-contextual: RoPE's rotations with learned per-plane
    frequencies (module docstring). Extrapolates as it is."""

    Params = GrapeMParams
    per_layer = True  # each attention layer has its own MSGRAPECommuting, so its own spectrum
    cacheable = True  # a token's rotation depends on its own position id alone

    def __init__(self, params: GrapeMParams, dims: ModelDims):
        super().__init__(params, dims)
        if dims.head_dim % 2:
            raise ValueError(f"GRAPE-M rotates planes: head_dim must be even, got {dims.head_dim}")
        log_freq = initial_log_freq(dims.head_dim, params.base, params.log_freq_scale)  # [d/2]
        self.log_freq = nn.Parameter(log_freq.repeat(dims.n_heads, 1) if params.per_head else log_freq)

    def rotate(self, q, k, q_pos, k_pos):
        def turned(x, pos):
            angles = grape_m_angles(pos, self.log_freq, self.params.log_freq_scale)  # [T, d/2] or [H, T, d/2]
            return rotate_half_split(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype))

        return turned(q, q_pos), turned(k, k_pos)

    def no_weight_decay(self) -> frozenset[str]:
        # One rule for the spectrum, shared ([d/2]) or per head ([H, d/2]). The authors decay every
        # parameter but RMSNorm's (model-architectures/GRAPE optim_utils.py, weight_decay 0.01);
        # the trainer leaves 1-D parameters undecayed, so the shared spectrum never was here.
        return frozenset({"log_freq"})


# -- GRAPE-A ------------------------------------------------------------------------

Gate = Literal["query_key", "key", "query"]
GATED_SIDES: dict[str, tuple[bool, bool]] = {  # gate -> (query gate v, key gate u)
    "query_key": (True, True), "key": (False, True), "query": (True, False)}


@dataclass(frozen=True)
class GrapeAParams:
    gate: Gate = "query_key"  # which of q_i and k_j set the slope: GRAPE-A-QK (Eq. 4.6), -K, -Q
    omega_init: float = 1.0  # softplus(omega_h) at initialisation, times ALiBi's slope m_h

    def __post_init__(self):
        if self.gate not in GATED_SIDES:
            raise ValueError(f"gate must be one of {sorted(GATED_SIDES)}, got {self.gate!r}")
        if not self.omega_init > 0:
            raise ValueError(f"omega_init must be > 0, got {self.omega_init}")


def softplus_inverse(y: float) -> float:
    """x with softplus(x) = y > 0."""
    return math.log(math.expm1(y))


def content_gate(x: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """lambda = softplus(<x, w / |w|> / sqrt(d)) >= 0 [B, H, T] of x [B, H, T, d], one direction
    w [H, d] per head."""
    unit = F.normalize(direction, dim=-1, eps=UNIT_EPS)
    return F.softplus((x * unit[:, None, :]).sum(dim=-1) / math.sqrt(x.shape[-1]))


def gated_linear_bias(distance: torch.Tensor, slope: torch.Tensor, rate: torch.Tensor) -> torch.Tensor:
    """-(i - j) w_h Lambda_ij [B, H, Tq, Tk] from distances i - j >= 0 [Tq, Tk], slopes w [H] and
    rates Lambda [B, H, Tq|1, Tk|1] (Eq. 4.6 with j - i = -(i - j))."""
    return -distance * slope[:, None, None] * rate


def _float32_at_least(x: torch.Tensor) -> torch.Tensor:
    """x in float32, or float64 if it already is: the gates' softplus of a reduction, kept out
    of bfloat16 as the authors keep it (their sums are float32)."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


@ENCODINGS.register("grape_a")
class GrapeA(PositionalEncoding):
    """Additive GRAPE: an ALiBi-like linear bias whose slope the query and/or the key set
    (module docstring). Extrapolates as it is."""

    Params = GrapeAParams
    per_layer = True  # each attention layer has its own gated-bias module
    cacheable = True  # the bias of (i, j) reads q_i, k_j (as cached) and their position ids alone

    def __init__(self, params: GrapeAParams, dims: ModelDims):
        super().__init__(params, dims)
        H, d = dims.n_heads, dims.head_dim
        self.register_buffer("slopes", alibi_slopes(H), persistent=False)
        self.omega = nn.Parameter(torch.full((H,), softplus_inverse(params.omega_init)))
        query_gate, key_gate = GATED_SIDES[params.gate]
        self.v = nn.Parameter(torch.randn(H, d) / math.sqrt(d)) if query_gate else None  # query gate direction
        self.u = nn.Parameter(torch.randn(H, d) / math.sqrt(d)) if key_gate else None  # key gate direction

    def slope(self) -> torch.Tensor:
        """w_h = softplus(omega_h) m_h [H]."""
        return F.softplus(self.omega) * self.slopes

    def rate(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Lambda_ij [B, H, Tq|1, Tk|1]: the query gate, the key gate, or their sum."""
        rate = torch.zeros((), dtype=_float32_at_least(q).dtype, device=q.device)
        if self.v is not None:
            rate = rate + content_gate(_float32_at_least(q), self.v)[..., :, None]
        if self.u is not None:
            rate = rate + content_gate(_float32_at_least(k), self.u)[..., None, :]
        return rate

    def score(self, q, k, scores, q_pos, k_pos):
        distance = (q_pos[:, None] - k_pos[None, :]).clamp_min(0)  # [Tq, Tk]
        rate = self.rate(q, k)
        bias = gated_linear_bias(distance.to(rate.dtype), self.slope().to(rate.dtype), rate)
        return scores + bias.to(scores.dtype)
