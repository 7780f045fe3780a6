"""The gated delta rule, computed chunk by chunk: the recurrence of Gated DeltaNet.

Yang, Kautz and Hatamizadeh 2025, "Gated Delta Networks: Improving Mamba2 with Delta Rule"
(ICLR 2025, arXiv 2412.06464), Eq. 10: per head, a state S [Dk, Dv] that each token decays
by alpha_t = exp(g_t) and then corrects towards its value,

    S_t = alpha_t S_{t-1} + k_t u_t^T,   u_t = beta_t (v_t - (alpha_t S_{t-1})^T k_t),
    o_t = S_t^T q_t,

with q_t and k_t L2-normalised and q_t scaled by 1 / sqrt(Dk). Written for a chunk of C tokens
that starts from the state S_0, with gamma_i = g_1 + ... + g_i the chunk's cumulative log
decay, the corrections are the solution of a unit lower-triangular system (the WY / UT form,
Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule over Sequence Length",
Sec. 3):

    (I + A) U = beta V - (beta exp(gamma) K) S_0,   A_ij = beta_i exp(gamma_i - gamma_j) k_i . k_j  (j < i),
    o_i = exp(gamma_i) S_0^T q_i + sum_{j <= i} exp(gamma_i - gamma_j) (q_i . k_j) u_j,
    S_C = exp(gamma_C) S_0 + sum_j exp(gamma_C - gamma_j) k_j u_j^T,

so a chunk costs a few [C, C] matrix products and one triangular solve, and only the chunks
are sequential. Every exponent is of a difference gamma_i - gamma_j with j <= i, so none
overflows. Tensor letters: B batch, H heads, T time, C chunk, Dk key and query width, Dv value
width; every tensor here is float32 (the reference computes in float32 whatever its input).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

L2_EPS = 1e-6  # inside the rsqrt, as flash-linear-attention's l2norm and transformers' fallback


def l2_normalise(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + L2_EPS)


def chunked_gated_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
                             chunk: int = 64) -> torch.Tensor:
    """Outputs [B, H, T, Dv] of the gated delta rule (module docstring) from the zero state:
    queries and keys [B, H, T, Dk] (normalised here), values [B, H, T, Dv], log decays g <= 0
    and write strengths beta in (0, 1), both [B, H, T]."""
    B, H, T, Dk = q.shape
    q = l2_normalise(q) * Dk**-0.5
    k = l2_normalise(k)
    pad = (-T) % chunk  # zero tokens after the end: they decay nothing (g = 0) and write nothing (beta = 0)
    q, k, v = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
    g, beta = (F.pad(t, (0, pad)) for t in (g, beta))
    n = (T + pad) // chunk
    q, k, v = (t.reshape(B, H, n, chunk, t.shape[-1]) for t in (q, k, v))  # [B, H, N, C, D]
    g, beta = g.reshape(B, H, n, chunk), beta.reshape(B, H, n, chunk)
    gamma = g.cumsum(dim=-1)  # [B, H, N, C]
    # exp(gamma_i - gamma_j) for j <= i, and 0 above the diagonal (masked before the exp)
    upper = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).triu(1)
    decay = (gamma[..., :, None] - gamma[..., None, :]).masked_fill(upper, float("-inf")).exp()  # [B, H, N, C, C]
    kb = k * beta[..., None]
    system = (kb @ k.transpose(-1, -2)) * decay  # I + A once its (unit) diagonal is read as 1
    u_free = torch.linalg.solve_triangular(system, v * beta[..., None], upper=False, unitriangular=True)
    u_state = torch.linalg.solve_triangular(system, kb * gamma.exp()[..., None], upper=False, unitriangular=True)
    scores = (q @ k.transpose(-1, -2)) * decay  # [B, H, N, C, C], j <= i
    q_state = q * gamma.exp()[..., None]  # reads exp(gamma_i) S_0
    k_state = k * (gamma[..., -1:] - gamma).exp()[..., None]  # writes exp(gamma_C - gamma_j) k_j
    carry = gamma[..., -1].exp()[..., None, None]  # [B, H, N, 1, 1]
    state = q.new_zeros(B, H, Dk, v.shape[-1])
    out = []
    for c in range(n):
        u = u_free[:, :, c] - u_state[:, :, c] @ state  # [B, H, C, Dv]
        out.append(q_state[:, :, c] @ state + scores[:, :, c] @ u)
        state = state * carry[:, :, c] + k_state[:, :, c].transpose(-1, -2) @ u
    return torch.cat(out, dim=2)[:, :, :T]


def recurrent_gated_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
                               beta: torch.Tensor) -> torch.Tensor:
    """The same outputs one token at a time (Eq. 10 as written): the definition the chunked
    form is tested against, O(T) sequential steps."""
    B, H, T, Dk = q.shape
    q = l2_normalise(q) * Dk**-0.5
    k = l2_normalise(k)
    state = q.new_zeros(B, H, Dk, v.shape[-1])
    out = []
    for t in range(T):
        state = state * g[..., t].exp()[..., None, None]
        u = beta[..., t, None] * (v[:, :, t] - (state * k[:, :, t, :, None]).sum(dim=-2))  # [B, H, Dv]
        state = state + k[:, :, t, :, None] * u[..., None, :]
        out.append((state * q[:, :, t, :, None]).sum(dim=-2))
    return torch.stack(out, dim=2)
