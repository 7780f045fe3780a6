"""CoPE: contextual positions, counted by gates the queries set on the keys."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding


@dataclass(frozen=True)
class CopeParams:
    npos_max: int | None = None  # number of position embeddings; None: training length + 1 (their block_size + 1)
    scale_position_logits: bool = True  # divide q.e by sqrt(Dh) with q.k (their default; --cope-nodiv turns it off)

    def __post_init__(self):
        if self.npos_max is not None and self.npos_max < 2:
            raise ValueError("npos_max must be >= 2")


def cope_positions(gates: torch.Tensor, npos_max: int) -> torch.Tensor:
    """p_ij = sum_{t=j}^{i} g_it (CoPE, Sec. 3), clamped at npos_max - 1.

    ``gates`` [..., Tq, Tk] must be 0 for future keys (t > i), so the reverse
    cumulative sum over keys stops at the query."""
    return gates.flip(-1).cumsum(-1).flip(-1).clamp(max=npos_max - 1)


def interpolated_logits(logits_int: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """q_i . e[p_ij] with e[p] interpolated between the nearest integers (CoPE, Sec. 3).

    ``logits_int`` [..., Tq, P] holds q_i . e[p] for the integer positions p."""
    floor = positions.floor()
    frac = positions - floor  # [..., Tq, Tk]
    low = logits_int.gather(-1, floor.long())
    high = logits_int.gather(-1, positions.ceil().long())
    return frac * high + (1 - frac) * low


@ENCODINGS.register("cope")
class Cope(PositionalEncoding):
    """Contextual Position Encoding (Golovneva et al. 2024, "Contextual Position
    Encoding: Learning to Count What's Important", Sec. 3, gates, positions,
    interpolation and attention), as the authors' released code computes it
    (facebookresearch/RAM ``projects/cope/src/cope/context_position.py``,
    ``ContextPosSelfAttn``, commit e6f051f, with its command-line defaults):

        g_ij = sigmoid(q_i . k_j / sqrt(Dh)),   p_ij = sum_{t=j}^{i} g_it,
        a_ij = softmax((q_i . k_j + q_i . e[p_ij]) / sqrt(Dh)),

    with e[p] learned per integer position and interpolated between floor(p) and
    ceil(p); positions are clamped at ``npos_max - 1``. The released code has
    block_size + 1 embeddings by default ("position 0 is possible"), so a count can
    reach the training length itself; and it divides the position term q.e by sqrt(Dh)
    together with q.k. The paper's code listing adds q.e unscaled instead, which is
    the released code's ``--cope-nodiv``: ``scale_position_logits: false``, the spec
    ``cope-nodiv``. The gates are the sigmoid of the logits the model has already scaled
    and masked (a future key's logit is -inf, so its gate is 0, as the reference's gates
    times its mask). e is shared by the heads of a layer and initialised to zero; every
    layer has its own (the reference's default, no ``--cope-shared``). Positions past
    ``npos_max`` reuse the last embedding, so the encoding extrapolates as it is.
    """

    Params = CopeParams
    per_layer = True

    def __init__(self, params: CopeParams, dims: ModelDims):
        super().__init__(params, dims)
        self.npos_max = params.npos_max or dims.train_len + 1
        self.pos_emb = nn.Parameter(torch.zeros(dims.head_dim, self.npos_max))  # [Dh, P]
        self.position_scale = 1 / math.sqrt(dims.head_dim) if params.scale_position_logits else 1.0

    def score(self, q, k, scores, q_pos, k_pos):
        # counts in float32: a long cumulative sum in bfloat16 would be off by whole positions
        positions = cope_positions(torch.sigmoid(scores.float()), self.npos_max)  # [B, H, Tq, Tk]
        logits_int = q.float() @ self.pos_emb.float()  # [B, H, Tq, P]
        position_logits = interpolated_logits(logits_int, positions) * self.position_scale
        return scores + position_logits.to(scores.dtype)
