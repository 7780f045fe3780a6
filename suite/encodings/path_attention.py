"""PaTH attention: data-dependent position transforms, a Householder-like matrix per token."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding


@dataclass(frozen=True)
class PathParams:
    forget_gate: bool = False  # PaTH-FoX: FoX's forget gate on top (the authors' use_forget_gate)
    w_rank: int = 32  # the low-rank w projection's inner width (the authors' use_low_rank_w: 32); 0: full rank
    conv_size: int = 3  # the short causal convolution over w (use_w_shortconv, conv_size 3); 0: none
    init_std: float = 0.02  # the authors' initializer_range for every Linear and Conv1d weight (biases zero)

    def __post_init__(self):
        if self.w_rank < 0 or self.conv_size < 0:
            raise ValueError(f"w_rank and conv_size must be >= 0, got {self.w_rank} and {self.conv_size}")
        if not self.init_std > 0:
            raise ValueError(f"init_std must be > 0, got {self.init_std}")


BLOCK = 64  # tokens per block: the authors' naive reference's chunk_size (their kernel's block size)


def path_logits(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, beta: torch.Tensor, q0: int = 0,
                k0: int = 0, block: int = BLOCK) -> torch.Tensor:
    """Raw PaTH logits [B, H, Tq, Tk]: ``q_i^T H_i H_{i-1} ... H_{j+1} k_j`` for query i
    (indices q0 ..) and key j <= i (indices k0 ..), where ``H_t = I - beta_t w_t w_t^T`` with
    ``w`` [B, H, T, Dh] (unit vectors) and ``beta`` [B, H, T] of the whole sequence read so
    far. Entries with j > i are 0 (the causal mask removes them). In float32.

    A port of the authors' naive reference (fla/ops/path_attn/naive.py, the algorithm their
    Triton kernel blocks; the paper's blockwise algorithm): within a block of tokens the product
    of its transforms has the compact WY form ``I - W^T T diag(beta) W`` with
    ``T = (I + strict_lower(diag(beta) W W^T))^-1`` (the UT transform), so every logit within
    a block, each query's transforms from its block's start, each key's to its block's end
    and each block's whole product are a few matrix products; a query block then meets the
    earlier key blocks one at a time, nearest first, taking each block's product on the way.
    The UT inverse is a triangular solve here where the reference forward-substitutes row by
    row. Queries and keys not at 0 (the model's long-sequence chunks) are placed at their
    indices in zero-padded blocks.
    """
    B, H, Tq, Dh = q.shape
    Tk, end = k.shape[2], q0 + Tq
    n = -(-end // block)  # blocks covering tokens 0 .. end - 1
    pad = n * block

    def blocks(x: torch.Tensor, at: int) -> torch.Tensor:  # [B, H, len, d] at indices at.. -> [B, H, n, C, d]
        full = x.new_zeros(B, H, pad, x.shape[-1])
        full[:, :, at : at + x.shape[2]] = x
        return full.view(B, H, n, block, -1)

    Q, K = blocks(q.float(), q0), blocks(k.float(), k0)
    W = blocks(w[:, :, :end].float(), 0)
    Wb = W * blocks(beta[:, :, :end, None].float(), 0)  # beta_t w_t (padding: beta 0, H = I)
    eye = torch.eye(block, device=q.device)
    upper = torch.ones(block, block, dtype=torch.bool, device=q.device).triu()  # t >= s: left out
    T = torch.linalg.solve_triangular(eye + (Wb @ W.transpose(-1, -2)).masked_fill(upper, 0), eye, upper=False)
    Twbk = T @ (Wb @ K.transpose(-1, -2)).masked_fill(upper, 0)  # [.., C(t), C(key)]
    qw = (Q @ W.transpose(-1, -2)).tril()  # [.., C(query), C(t)]: q_i . w_t for t <= i
    Twb = T @ Wb
    local = (Q @ K.transpose(-1, -2)).tril() - qw @ Twbk  # logits within a block
    Q = Q - qw @ Twb  # each query through its block's transforms up to itself
    K = K - Twbk.transpose(-1, -2) @ W  # each key through its block's transforms after it
    P = W.transpose(-1, -2) @ Twb  # each block's whole product is I - P [.., Dh, Dh]
    first = q0 // block  # the query blocks first .. n - 1 hold every query asked for
    Q = Q[:, :, first:]
    A = Q.new_zeros(B, H, n - first, n, block, block)  # [.., query block, key block, C, C]
    i = torch.arange(first, n, device=q.device)
    A[:, :, i - first, i] = local[:, :, first:]
    for d in range(1, n):  # query block i meets key block i - d, then takes that block's product
        lo = max(d, first)
        i = torch.arange(lo, n, device=q.device)
        s = lo - first  # Q's row of query block lo
        A[:, :, i - first, i - d] = Q[:, :, s:] @ K[:, :, lo - d : n - d].transpose(-1, -2)
        Q = torch.cat((Q[:, :, :s], Q[:, :, s:] - Q[:, :, s:] @ P[:, :, lo - d : n - d]), dim=2)
    A = A.transpose(3, 4).reshape(B, H, (n - first) * block, pad)
    return A[:, :, q0 - first * block : end - first * block, k0 : k0 + Tk].to(q.dtype)


@ENCODINGS.register("path")
class PaTH(PositionalEncoding):
    """Yang et al. 2025, "PaTH Attention: Position Encoding via Accumulating Householder
    Transformations" (NeurIPS 2025, arXiv 2505.16381), its attention logit: the logit of query i over
    key j is ``k_j^T (prod_{s=j+1..i} H_s) q_i`` with a Householder-like matrix per token,
    ``H_t = I - beta_t w_t w_t^T``, where w_t and beta_t are functions of token t. So the
    transform between two positions depends on the tokens between them, not on the
    distance alone (RoPE's ``R^{i-j}``). No other position information.

    As the authors' layer (fla-org/flash-linear-attention@bc3b101, ``fla/layers/path_attn.py``,
    ``PaTHAttention`` with its defaults): ``w = l2norm(silu(conv(W_2 W_1 x)))`` per head, with
    a low-rank projection (d_model -> 32 -> d_model, no bias) and a depthwise causal
    convolution of width 3 (``ShortConvolution``, no bias, silu); ``beta = 2 sigmoid(W_b x +
    b)`` (in (0, 2): "allowing negative eigenvalues"); every weight N(0, 0.02), biases zero,
    as the authors' ``_init_weights``. The logits are scaled by 1/sqrt(Dh) as theirs.
    PaTH-FoX (``forget_gate``) adds FoX's gate ``g = logsigmoid(W_g x + b_g)``; the
    authors add its cumulative sums to the raw logit before the 1/sqrt(Dh) scaling (their
    naive reference and kernel alike), so the decay hook returns g / sqrt(Dh).

    The authors' kernel is Triton (GPU); this is a PyTorch port of the computation their
    naive reference does (``fla/ops/path_attn/naive.py``, tests/encodings/test_path.py
    compares the two). Not cacheable: a new token's H changes every earlier key's transform
    seen from later queries (the authors' decoding updates the cached keys in place).
    Scale behaviour: extrapolates as it is (w and beta are computed for any length).
    """

    Params = PathParams
    per_layer = True  # each layer its own projections

    def __init__(self, params: PathParams, dims: ModelDims):
        super().__init__(params, dims)
        d, std = dims.d_model, params.init_std
        self.w_proj = (nn.Sequential(nn.Linear(d, params.w_rank, bias=False), nn.Linear(params.w_rank, d, bias=False))
                       if params.w_rank else nn.Linear(d, d, bias=False))
        self.w_conv = (nn.Conv1d(d, d, params.conv_size, groups=d, padding=params.conv_size - 1, bias=False)
                       if params.conv_size else None)
        self.bt_proj = nn.Linear(d, dims.n_heads, bias=True)
        self.g_proj = nn.Linear(d, dims.n_heads, bias=True) if params.forget_gate else None
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Conv1d)):
                nn.init.normal_(module.weight, std=std)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)

    def active_hooks(self) -> frozenset[str]:
        return frozenset({"logits", "decay"} if self.params.forget_gate else {"logits"})

    def transforms(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """w [B, H, T, Dh] (unit vectors, float32) and beta [B, H, T] of the layer's input x [B, T, D]."""
        B, T, D = x.shape
        w = self.w_proj(x)  # [B, T, D]
        if self.w_conv is not None:  # causal: the left padding's outputs, cut to T
            w = F.silu(self.w_conv(w.transpose(1, 2))[..., :T]).transpose(1, 2)
        w = F.normalize(w.view(B, T, self.dims.n_heads, -1).float(), dim=-1).transpose(1, 2)
        beta = 2 * self.bt_proj(x).float().sigmoid().transpose(1, 2)  # [B, H, T]
        return w, beta

    def logits(self, q, k, x, q0, k0):
        w, beta = self.transforms(x)
        return path_logits(q, k, w, beta, q0, k0)

    def forget_gate(self, x: torch.Tensor) -> torch.Tensor:
        """PaTH-FoX's log forget gates [B, H, T] (float32) of the layer's input x [B, T, D]."""
        return F.logsigmoid(self.g_proj(x).float()).transpose(1, 2)

    def decay(self, x: torch.Tensor) -> torch.Tensor:
        # the authors scale (logit + gate sums) by 1/sqrt(Dh); the model adds the decay after its scaling
        return (self.forget_gate(x) / self.dims.head_dim ** 0.5).to(x.dtype)
