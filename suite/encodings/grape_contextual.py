"""GRAPE's contextual variants, which read the layer's input: path-integral additive GRAPE
(GRAPE-AP) and contextual multiplicative GRAPE (GRAPE-M-ctx), through the ``logits`` hook.

Zhang et al., "Group Representational Position Encoding" (ICLR 2026, arXiv 2512.07805); both
as the authors' code (model-architectures/GRAPE@f5b539f, ``model/``), checked against it by
scripts/golden/grape.py. The non-contextual GRAPE-M and GRAPE-A are in suite.encodings.grape.
Letters: B batch, T time, H heads, Dh head dim, D model dim, P the probes' per-head dim.

* **GRAPE-AP** (Sec. 5, Eqs. 5.1-5.3; ``llama-mha-grape-ap-v1.py``, ``Rotary`` and
  ``CausalSelfAttention``, lines 19-202), the paper's headline variant. Each token t has a
  per-head positional probe p_t = W_p x_t [P]; an edge from query t to token l <= t has the
  potential

      psi_h(t, l) = alpha_h log sigmoid(<p_t, R_l p^_l> / P) <= 0,                  (5.1)

  with p^ = RMSNorm(p) (no weight) and R_l = exp(l J), which turns every plane by l radians
  (the authors' ``Rotary(P, base=1)``: frequency 1), and query t's bias over key j is the path
  integral

      b_h(t, j) = sum_{l = j+1 .. t} psi_h(t, l) <= 0,                              (5.2)

  added after the 1/sqrt(Dh) scaling, to NoPE's logits (Eq. 5.3, first form). So b(t, t) = 0
  and a key fades by what the query makes of every token between them. As the code, where it
  differs from the paper: the query's probe p_t is W_p x_t itself, not RMS-normalised (only
  the rotated p^_l is); the sum includes l = t (Eq. 5.1 says l < t); alpha_h is ALiBi's fixed
  slope m_h (a buffer, not learned); the 1/P divides by the probe width (P = 8 in their runs,
  ``p_head_dim``), not the head dim; R_l turns by -l in our rotation sense (their
  ``apply_rotary_emb`` is y1 = x1 cos + x2 sin; the paper leaves J's sign open), kept as
  theirs; W_p starts N(0, (0.5 / sqrt(D))^2) (their ``init_llama_mha_weights``,
  ``hidden_init_std_factor`` 0.5). Their tied probes (``p_tie_mode``: p = q, k or v) are left
  out: their runs untie them. The authors take b(t, j) as a row total minus a prefix sum in
  float32; we take the suffix sum from l = t down (the same numbers, without that
  cancellation, and a chunk of queries sums exactly the terms the whole does).

* **GRAPE-M, contextual** (GRAPE-M-ctx of Tables 1-2: the "phase-modulated" type of App. A-B,
  with no equation of its own; ``llama-mha-grape-m-ctx.py``, ``MSGRAPEContextType1`` and
  ``CausalSelfAttention``, lines 29-261): GRAPE-M's commuting planes turned by a cumulative
  phase instead of the position, G_t = exp(Phi_t theta L) with Phi_t = sum_{tau < t}
  omega_tau, so q_i^T G_i^T G_j k_j depends on Phi_j - Phi_i alone. As the code: omega_t =
  sigmoid((w.x_t + b) / 16) in (0, 1) (the file's header says softplus; the paper only asks
  omega >= 0), one phase per token shared by the heads (``grape_ctx_per_head`` False); theta =
  exp(log_freq) learned, starting at RoPE's base-10000 spectrum, shared by the heads (no 1/16
  scaling here, unlike non-contextual GRAPE-M). At initialisation w = 0 (their model's init
  skips it) and b = softplus^-1(1e-3) = -6.907 (``grape_ctx_init_omega``): their comment
  expects omega ~ 1e-3, but through the sigmoid every token starts at omega = sigmoid(-6.907 /
  16) = 0.394, so the model starts as RoPE read at positions 0.394 t. Rotation sense and
  planes as our GRAPE-M (half-split; +Phi theta where they turn by -Phi theta, which negating
  the second half of each head's W_q and W_k rows absorbs).

Both leave q and k unrotated (no ``rotate``), ignore the position ids (they read the token
indices q0.., k0..), and are not cacheable (the hook's contract: the model's cache holds keys
and values, where GRAPE-AP also needs every earlier token's probe and GRAPE-M-ctx its phase,
as the paper's streaming schemes keep them). QK-RMSNorm and
KV-shift, architecture changes in the authors' runs, are off as for the other GRAPEs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.grape import _float32_at_least, initial_log_freq, softplus_inverse
from suite.encodings.rotary import rotate_half_split
from suite.encodings.simple import alibi_slopes


def hidden_init_std(factor: float, d_model: int) -> float:
    """The authors' std of every hidden weight they draw: factor / sqrt(D)."""
    return factor / math.sqrt(d_model)


# -- GRAPE-AP -----------------------------------------------------------------------


@dataclass(frozen=True)
class GrapeAPParams:
    p_head_dim: int = 8  # P, the probes' width per head: the authors' runs' p_head_dim
    init_std_factor: float = 0.5  # W_p ~ N(0, (factor / sqrt(D))^2): their hidden_init_std_factor

    def __post_init__(self):
        if self.p_head_dim <= 0 or self.p_head_dim % 2:
            raise ValueError(f"p_head_dim must be even and > 0 (the probes turn in planes), got {self.p_head_dim}")
        if not self.init_std_factor > 0:
            raise ValueError(f"init_std_factor must be > 0, got {self.init_std_factor}")


def turn_probes(p: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """R_l p_l [..., T, P] of probes p [..., T, P] at token indices idx [T]: every half-split
    plane turned by -l radians, as the authors' ``Rotary(P, base=1)`` and ``apply_rotary_emb``."""
    angles = idx.to(p.dtype)[:, None].expand(-1, p.shape[-1] // 2)  # [T, P/2]: frequency 1 in every plane
    return rotate_half_split(p, angles.cos(), -angles.sin())


def edge_potentials(p_query: torch.Tensor, p_turned: torch.Tensor, slopes: torch.Tensor) -> torch.Tensor:
    """psi(t, l) = m_h log sigmoid(<p_t, R_l p^_l> / P) [B, H, Tq, Tl] (Eq. 5.1), in float32 at
    least as the authors', from query probes [B, H, Tq, P], turned normalised probes [B, H, Tl, P]
    and slopes [H]."""
    potentials = _float32_at_least((p_query @ p_turned.transpose(-2, -1)) * (1.0 / p_query.shape[-1]))
    return F.logsigmoid(potentials) * slopes.to(potentials.dtype)[:, None, None]


def path_integral_bias(psi: torch.Tensor, q_idx: torch.Tensor, l_idx: torch.Tensor, n_keys: int) -> torch.Tensor:
    """b(t, j) = sum_{l = j+1 .. t} psi(t, l) [B, H, Tq, n_keys] (Eq. 5.2) for queries q_idx [Tq]
    and keys l_idx[:n_keys], from the potentials psi [B, H, Tq, Tl] of tokens l_idx [Tl]
    (consecutive); 0 for future keys."""
    psi = psi.masked_fill(l_idx[None, :] > q_idx[:, None], 0.0)  # the path stops at the query
    from_l_on = psi.flip(-1).cumsum(-1).flip(-1)  # [..., Tl]: sum over tokens >= l
    return F.pad(from_l_on, (0, 1))[..., 1 : n_keys + 1]  # key j sums tokens >= j + 1


@ENCODINGS.register("grape_ap")
class GrapeAP(PositionalEncoding):
    """Path-integral additive GRAPE on NoPE (module docstring). Extrapolates as it is."""

    Params = GrapeAPParams
    per_layer = True  # each attention layer has its own probe projection W_p

    def __init__(self, params: GrapeAPParams, dims: ModelDims):
        super().__init__(params, dims)
        self.probe = nn.Linear(dims.d_model, dims.n_heads * params.p_head_dim, bias=False)  # the authors' c_p
        nn.init.normal_(self.probe.weight, std=hidden_init_std(params.init_std_factor, dims.d_model))
        self.register_buffer("slopes", alibi_slopes(dims.n_heads), persistent=False)

    def probes(self, x: torch.Tensor) -> torch.Tensor:
        """p = W_p x [B, H, T, P] of the layer's input x [B, T, D]."""
        B, T, _ = x.shape
        return self.probe(x).view(B, T, self.dims.n_heads, self.params.p_head_dim).transpose(1, 2)

    def path_bias(self, x: torch.Tensor, Tq: int, Tk: int, q0: int, k0: int) -> torch.Tensor:
        """b(t, j) [B, H, Tq, Tk] (float32 at least) of queries q0 .. and keys k0 .. (Eq. 5.2)."""
        end = max(q0 + Tq, k0 + Tk)  # the tokens k0 .. end - 1 hold every path
        q_idx, l_idx = (torch.arange(a, b, device=x.device) for a, b in ((q0, q0 + Tq), (k0, end)))
        p_path = self.probes(x[:, k0:end])  # [B, H, Tl, P]
        p_turned = turn_probes(F.rms_norm(p_path, (p_path.shape[-1],)), l_idx)
        psi = edge_potentials(self.probes(x[:, q0 : q0 + Tq]), p_turned, self.slopes)  # [B, H, Tq, Tl]
        return path_integral_bias(psi, q_idx, l_idx, Tk)

    def logits(self, q, k, x, q0, k0):
        b = self.path_bias(x, q.shape[2], k.shape[2], q0, k0)
        # The authors add b after the 1/sqrt(Dh) scaling (SDPA's attn_mask, Eq. 5.3); the model
        # scales what this returns, so b enters raw as sqrt(Dh) b.
        raw = (q @ k.transpose(-2, -1)).to(b.dtype) + math.sqrt(q.shape[-1]) * b
        return raw.to(q.dtype)


# -- GRAPE-M, contextual ---------------------------------------------------------------


@dataclass(frozen=True)
class GrapeMContextualParams:
    base: float = 10000.0  # RoPE's base: the initial spectrum (the authors' grape_base)
    per_head: bool = False  # one spectrum per head (grape_share_across_heads False); theirs share one
    per_head_phase: bool = False  # one phase per head (grape_ctx_per_head); theirs share one across heads
    omega_scale: float = 16.0  # s in omega = sigmoid((w.x + b) / s): grape_ctx_omega_scale
    init_omega: float = 1e-3  # b starts at softplus^-1 of it: grape_ctx_init_omega (omega starts at 0.394)

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if not self.omega_scale > 0:
            raise ValueError(f"omega_scale must be > 0, got {self.omega_scale}")
        if not self.init_omega > 0:
            raise ValueError(f"init_omega must be > 0, got {self.init_omega}")


def cumulative_phase(omega: torch.Tensor) -> torch.Tensor:
    """Phi_t = sum_{tau < t} omega_tau along the last dim, as the authors: cumsum - omega."""
    return omega.cumsum(dim=-1) - omega


def phase_angles(phi: torch.Tensor, log_freq: torch.Tensor) -> torch.Tensor:
    """Phi_t theta_i [B, H|1, T, Dh/2] of phases phi [B, H|1, T], theta = exp(log_freq) of
    log_freq [Dh/2] (shared) or [H, Dh/2] (per head)."""
    freq = torch.exp(log_freq.to(phi.dtype))
    return phi[..., None] * freq.view(-1, 1, freq.shape[-1])


@ENCODINGS.register("grape_m_ctx")
class GrapeMContextual(PositionalEncoding):
    """Multiplicative GRAPE with a content-driven cumulative phase (module docstring).
    Extrapolates as it is."""

    Params = GrapeMContextualParams
    per_layer = True  # each attention layer has its own spectrum and phase gate

    def __init__(self, params: GrapeMContextualParams, dims: ModelDims):
        super().__init__(params, dims)
        if dims.head_dim % 2:
            raise ValueError(f"GRAPE-M rotates planes: head_dim must be even, got {dims.head_dim}")
        log_freq = initial_log_freq(dims.head_dim, params.base, 1.0)  # [Dh/2] log theta, float32
        self.log_freq = nn.Parameter(log_freq.repeat(dims.n_heads, 1) if params.per_head else log_freq)
        self.omega_proj = nn.Linear(dims.d_model, dims.n_heads if params.per_head_phase else 1)  # the gate w, b
        with torch.no_grad():
            self.omega_proj.weight.zero_()
            self.omega_proj.bias.fill_(softplus_inverse(params.init_omega))

    def no_weight_decay(self) -> frozenset[str]:
        return frozenset({"log_freq"})  # as GrapeM's: one rule for the shared and the per-head spectrum

    def phase(self, x: torch.Tensor) -> torch.Tensor:
        """Phi [B, H|1, T] (float32 at least) of the layer's input x [B, T, D]."""
        omega = torch.sigmoid(_float32_at_least(self.omega_proj(x)) / self.params.omega_scale)  # [B, T, H|1]
        return cumulative_phase(omega.transpose(1, 2))

    def turn(self, v: torch.Tensor, phi: torch.Tensor, start: int) -> torch.Tensor:
        """G_t v [B, H, T, Dh] of queries or keys v at indices start .., given the phases phi
        [B, H|1, T_all] of the whole sequence (in float32 at least, as the authors' cos and sin)."""
        angles = phase_angles(phi[..., start : start + v.shape[2]], self.log_freq)  # [B, H|1, T, Dh/2]
        return rotate_half_split(_float32_at_least(v), angles.cos(), angles.sin()).to(v.dtype)

    def logits(self, q, k, x, q0, k0):
        phi = self.phase(x)
        return self.turn(q, phi, q0) @ self.turn(k, phi, k0).transpose(-2, -1)
