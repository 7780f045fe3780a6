"""The rotary family: RoPE and its length-scaling variants.

Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
Eq. (34): pairs of query/key dimensions are rotated by angle m * theta_i with
theta_i = base^(-2i/d), so <R_m q, R_n k> depends on m - n only.

Convention: **half-split pairs** (dimension i is paired with i + r/2, as in GPT-NeoX
and Hugging Face transformers' ``rotate_half``), not the paper's interleaved pairs
(2i, 2i+1). The two differ by a fixed permutation of head dimensions, which the
learned projections absorb, and half-split needs no reshape.

Each scaling is a function in :data:`SCALINGS` with one signature, ``(params, shape,
factor) -> (inverse frequencies, attention factor)``, like transformers'
``ROPE_INIT_FUNCTIONS``; the attention factor multiplies cos and sin, so q.k (rotated
dimensions) is multiplied by its square. Checked against transformers==5.23.0
(``modeling_rope_utils.py``) and jquesnelle/yarn@995db5b (``scaled_rope/``) by
scripts/golden/rotary.py.

* ``pi``  position interpolation, Chen et al. 2023 Eq. (3): theta_i / s
  (transformers ``"linear"``).
* ``ntk`` NTK-aware base change (bloc97 2023; YaRN paper Eq. 16): base * s^(d/(d-2)),
  as jquesnelle/yarn's ``LlamaNTKScaledRotaryEmbedding`` with alpha = s.
* ``yarn`` Peng et al. 2023, "YaRN", as the authors' code runs it (jquesnelle/yarn
  ``LlamaYaRNScaledRotaryEmbedding``, identical to transformers ``"yarn"``): theta_i
  is kept for pairs i <= low, divided by s for i >= high, and mixed linearly *in the
  pair index i* in between, where low = floor(i(beta_fast)), high = ceil(i(beta_slow)),
  clamped to [0, r - 1], and i(n) = d ln(L / (2 pi n)) / (2 ln base) is the pair that
  turns n times over the original training length L. Attention factor 0.1 ln s + 1
  (Eq. 22). The paper's Eq. (18) instead writes the ramp linear in r = L / lambda_i;
  the two readings differ widely inside the ramp (head dim 16, L = 64, s = 16: the
  authors keep theta_i x [1, 0.69, 0.375, 1/16, ...], the r-ramp [0.34, 0.13, 0.063,
  ...]). The r-ramp is kept as ``yarn_paper_ramp`` (spec yarn-paper-ramp).
* ``llama3`` Meta's Llama 3.1 rule: wavelengths shorter than L/high_freq_factor are
  kept, longer than L/low_freq_factor divided by s, smooth in between (transformers
  ``"llama3"``).

Dynamic scalings (:class:`DynamicRotary`; ``dynamic_ntk``, emozilla 2023 / YaRN paper
Sec. 3.3, transformers ``"dynamic"`` with factor 1; ``dynamic_yarn``, jquesnelle/yarn
``LlamaDynamicYaRNScaledRotaryEmbedding``) apply the static rule with the factor of the
current context length, max(1, l / L). They are evaluated as a left-to-right reader
sees them: query t and every key it attends to are rotated with factor (t + 1) / L.
This is a reader that caches keys *before* rotating them, the way the YaRN authors
recommend for dynamic scaling (bloc97 in transformers PR #24653; the "consistent"
dynamic NTK of transformers issue #25104). In a model of several layers it is not the same as re-reading the whole
prefix [0..t] at factor (t + 1) / L, which would also recompute the lower layers'
states at positions j < t with the later factor.

Partial rotary (``fraction`` < 1, GPT-NeoX/Pythia, transformers
``partial_rotary_factor``): only the first r = fraction * Dh dimensions rotate. Two
exponents exist in the literature: theta_i = base^(-2i/r) (GPT-NeoX and transformers,
``partial_exponent: rotary_dim``) and base^(-2i/Dh) (the frequencies full RoPE would
give those dimensions, ``partial_exponent: head_dim``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Literal

import torch

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, ScaleBehaviour

Scaling = Literal["none", "pi", "ntk", "yarn", "yarn_paper_ramp", "llama3", "dynamic_ntk", "dynamic_yarn"]


@dataclass(frozen=True)
class RotaryParams:
    base: float = 10000.0  # RoFormer's base
    fraction: float = 1.0  # share of each head's dimensions that rotate
    partial_exponent: Literal["rotary_dim", "head_dim"] = "rotary_dim"
    scaling: Scaling = "none"  # what happens at eval scale s > 1
    beta_fast: float = 32.0  # YaRN: frequencies doing > beta_fast rotations in L are kept
    beta_slow: float = 1.0  # YaRN: frequencies doing < beta_slow rotations in L are interpolated
    low_freq_factor: float = 1.0  # Llama 3 (Meta's defaults)
    high_freq_factor: float = 4.0
    # a static scaling's factor at every length, short texts too ("always on": Qwen's static YaRN
    # config, rope_scaling factor 4); None: the evaluation scale s. Left out of ids at None.
    factor: float | None = field(default=None, metadata={"hash_default": False})

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if not 0 < self.fraction <= 1:
            raise ValueError("fraction must be in (0, 1]")
        if self.beta_fast <= self.beta_slow:
            raise ValueError("beta_fast must be greater than beta_slow")
        if self.high_freq_factor <= self.low_freq_factor:
            raise ValueError("high_freq_factor must be greater than low_freq_factor")
        if self.factor is not None and (self.factor < 1 or self.scaling in ("none", *DYNAMIC)):
            raise ValueError("factor fixes a static scaling's factor (pi, ntk, yarn, ...) at 1 or more")


@dataclass(frozen=True)
class RotaryShape:
    """What the frequency rules need besides the params."""

    rotary_dim: int  # r: dimensions that rotate (r/2 pairs)
    exponent_dim: int  # d in theta_i = base^(-2i/d)
    train_len: int  # L: the original training length


# -- frequencies: small pure functions that build on one another ---------------


def default_inv_freq(rotary_dim: int, base: float, exponent_dim: int | None = None) -> torch.Tensor:
    """theta_i = base^(-2i / exponent_dim), i = 0 .. rotary_dim/2 - 1 (float64)."""
    exponent_dim = exponent_dim or rotary_dim
    return base ** (-torch.arange(0, rotary_dim, 2, dtype=torch.float64) / exponent_dim)


def turns_a_whole_period(inv_freq: torch.Tensor, train_len: int) -> torch.Tensor:
    """True where a frequency completes at least one whole period within the training
    length (theta_i >= 2 pi / L): the pairs that FoPE keeps and HoPE leaves rotating."""
    return inv_freq >= 2 * math.pi / train_len


def interpolated_inv_freq(inv_freq: torch.Tensor, factor: float) -> torch.Tensor:
    """Position interpolation: position p gets the angles of p / factor."""
    return inv_freq / factor


def ntk_base(base: float, factor: float, exponent_dim: int) -> float:
    """NTK-aware base: the lowest frequency is interpolated by ``factor``, the highest kept.

    With a single rotating pair (exponent_dim 2) the only frequency is base^0 = 1, which
    no base change moves, so the base is returned as it is."""
    if exponent_dim <= 2:
        return base
    return base * factor ** (exponent_dim / (exponent_dim - 2))


def yarn_correction_dim(rotations: float, exponent_dim: int, base: float, train_len: int) -> float:
    """The (fractional) pair index i whose wavelength 2 pi base^(2i/d) fits ``rotations``
    times into L (the authors' ``find_correction_dim``)."""
    return exponent_dim * math.log(train_len / (rotations * 2 * math.pi)) / (2 * math.log(base))


def yarn_ramp(shape: RotaryShape, base: float, beta_fast: float, beta_slow: float) -> torch.Tensor:
    """gamma_i [r/2]: 1 keeps theta_i, 0 interpolates it; linear in the pair index between
    floor/ceil of the correction dims, as jquesnelle/yarn (``find_correction_range``,
    ``linear_ramp_mask``) and transformers' ``_compute_yarn_parameters``."""
    low = max(math.floor(yarn_correction_dim(beta_fast, shape.exponent_dim, base, shape.train_len)), 0)
    high = min(math.ceil(yarn_correction_dim(beta_slow, shape.exponent_dim, base, shape.train_len)), shape.rotary_dim - 1)
    if low == high:
        high += 0.001  # the reference's guard against a zero-width ramp
    ramp = ((torch.arange(shape.rotary_dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0.0, 1.0)
    return 1 - ramp


def yarn_paper_ramp(inv_freq: torch.Tensor, train_len: int, beta_fast: float, beta_slow: float) -> torch.Tensor:
    """gamma(r) of YaRN Eq. (18), linear in r = L / lambda = L * theta / (2 pi): 0 below
    beta_slow, 1 above beta_fast."""
    rotations = train_len * inv_freq / (2 * math.pi)
    return ((rotations - beta_slow) / (beta_fast - beta_slow)).clamp(0.0, 1.0)


def yarn_inv_freq(inv_freq: torch.Tensor, factor: float, gamma: torch.Tensor) -> torch.Tensor:
    """YaRN Eq. (19): h(theta) = (1 - gamma) theta / s + gamma theta."""
    return (1 - gamma) * interpolated_inv_freq(inv_freq, factor) + gamma * inv_freq


def yarn_mscale(factor: float) -> float:
    """YaRN Eq. (22): sqrt(1/t) = 0.1 ln(s) + 1, multiplied into cos and sin (so q.k by 1/t)."""
    return 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1.0


def llama3_inv_freq(inv_freq, factor, train_len, low_freq_factor, high_freq_factor) -> torch.Tensor:
    """Llama 3.1's rule over wavelengths lambda = 2 pi / theta, with L the original length."""
    wavelen = 2 * math.pi / inv_freq
    smooth = (train_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * interpolated_inv_freq(inv_freq, factor) + smooth * inv_freq
    out = torch.where(wavelen > train_len / low_freq_factor, inv_freq / factor, smoothed)
    return torch.where(wavelen < train_len / high_freq_factor, inv_freq, out)


# -- the scalings: one signature, (params, shape, factor) -> (inv_freq, attention factor) --

Frequencies = tuple[torch.Tensor, float]


def _none(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    return default_inv_freq(shape.rotary_dim, p.base, shape.exponent_dim), 1.0


def _pi(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    return interpolated_inv_freq(_none(p, shape, factor)[0], factor), 1.0


def _ntk(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    return default_inv_freq(shape.rotary_dim, ntk_base(p.base, factor, shape.exponent_dim), shape.exponent_dim), 1.0


def _yarn(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    gamma = yarn_ramp(shape, p.base, p.beta_fast, p.beta_slow)
    return yarn_inv_freq(_none(p, shape, factor)[0], factor, gamma), yarn_mscale(factor)


def _yarn_paper_ramp(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    inv_freq = _none(p, shape, factor)[0]
    gamma = yarn_paper_ramp(inv_freq, shape.train_len, p.beta_fast, p.beta_slow)
    return yarn_inv_freq(inv_freq, factor, gamma), yarn_mscale(factor)


def _llama3(p: RotaryParams, shape: RotaryShape, factor: float) -> Frequencies:
    inv_freq = _none(p, shape, factor)[0]
    return llama3_inv_freq(inv_freq, factor, shape.train_len, p.low_freq_factor, p.high_freq_factor), 1.0


SCALINGS: dict[str, Callable[[RotaryParams, RotaryShape, float], Frequencies]] = {
    "none": _none, "pi": _pi, "ntk": _ntk, "yarn": _yarn, "yarn_paper_ramp": _yarn_paper_ramp, "llama3": _llama3}
DYNAMIC: dict[str, str] = {"dynamic_ntk": "ntk", "dynamic_yarn": "yarn"}  # the static rule each follows per query


def cos_sin_tables(inv_freq: torch.Tensor, end: int, device, dtype=torch.float32,
                   attention_factor: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [n, r/2] of p theta_i (times ``attention_factor``) for positions p < n, n = end
    rounded up to a power of two (so that a cache of them grows seldom); computed in float64."""
    n = max(end, 1 << (end - 1).bit_length())
    angles = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [n, r/2]
    return tuple((t * attention_factor).to(device, dtype) for t in (angles.cos(), angles.sin()))


def rotate_half_split(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (i, i + r/2) of the first r = 2 * cos.shape[-1] dims of x [..., T, Dh]."""
    half = cos.shape[-1]
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    rotated = (x1 * cos - x2 * sin, x2 * cos + x1 * sin)
    return torch.cat(rotated + (rest,) if rest.shape[-1] else rotated, dim=-1)


@ENCODINGS.register("rotary")
class Rotary(PositionalEncoding):
    """RoPE with optional partial rotation and a static length scaling (module docstring)."""

    Params = RotaryParams
    dynamic: ClassVar[bool] = False  # True: the factor follows each query's context length
    cacheable = True  # a static scaling rotates every id by the same rule at a given scale

    def __init__(self, params: RotaryParams, dims: ModelDims):
        super().__init__(params, dims)
        if (params.scaling in DYNAMIC) != self.dynamic:
            need = "suite.encodings.rotary:DynamicRotary" if params.scaling in DYNAMIC else "rotary"
            raise ValueError(f"scaling {params.scaling!r} needs impl: {need}")
        self.rotary_dim = 2 * max(1, round(params.fraction * dims.head_dim / 2))
        exponent_dim = self.rotary_dim if params.partial_exponent == "rotary_dim" else dims.head_dim
        self.shape = RotaryShape(self.rotary_dim, exponent_dim, dims.train_len)
        self.exponent_dim = exponent_dim
        self._tables: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.EXTRAPOLATE if self.params.scaling == "none" else ScaleBehaviour.ADJUST

    def frequencies(self, factor: float | None = None) -> Frequencies:
        """(inverse frequencies [r/2] in float64, attention factor) at ``factor``
        (default: the factor ``rotate`` uses, the evaluation scale for a static scaling)."""
        rule = DYNAMIC.get(self.params.scaling, self.params.scaling)
        return SCALINGS[rule](self.params, self.shape, self.rotation_factor() if factor is None else factor)

    def rotation_factor(self) -> float:
        """The evaluation scale s, or the spec's fixed ``factor`` at every length (always on)."""
        fixed = getattr(self.params, "factor", None)  # subclasses with params of their own have none
        return self.scale if fixed is None else fixed

    def cos_sin(self, seq_len: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """Cached [n >= seq_len, r/2] tables (attention factor included), grown lazily to
        the next power of two."""
        key = (self.rotation_factor(), str(device))
        cached = self._tables.get(key)
        if cached is None or cached[0].shape[0] < seq_len:
            inv_freq, attention_factor = self.frequencies()
            cached = self._tables[key] = cos_sin_tables(inv_freq, seq_len, device, attention_factor=attention_factor)
        return cached

    def cos_sin_at(self, pos: torch.Tensor, end: int | None) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [T, r/2] (float32, attention factor included) of the ids ``pos`` [T]: rows
        of the cached tables of ``end`` > every id, or, with ``end`` None, the same float64
        angles computed for these ids alone (the values of the table's rows: an integer id times
        the same inverse frequencies)."""
        if end is not None:
            cos, sin = self.cos_sin(end, pos.device)
            return cos[pos], sin[pos]
        inv_freq, attention_factor = self.frequencies()
        angles = pos.to(torch.float64)[:, None] * inv_freq.to(pos.device)[None, :]  # [T, r/2]
        return tuple((t * attention_factor).to(torch.float32) for t in (angles.cos(), angles.sin()))

    def rotate(self, q, k, q_pos, k_pos):
        # Compiled, no table: its length is read off the ids (int(max) + 1), a value dynamo cannot
        # trace, so each call broke the graph and each new length recompiled (on an H200 the
        # compiled evaluations reached dynamo's limit of 8 and ran eager). Eager, the cached table.
        end = None if torch.compiler.is_compiling() else int(torch.maximum(q_pos.max(), k_pos.max())) + 1
        if q_pos is k_pos and q.shape == k.shape:  # self-attention: one rotation of both (fewer, larger kernels)
            cos, sin = self.cos_sin_at(q_pos, end)
            qk = rotate_half_split(torch.stack((q, k)), cos.to(q.dtype), sin.to(q.dtype))
            return qk[0], qk[1]
        (cq, sq), (ck, sk) = self.cos_sin_at(q_pos, end), self.cos_sin_at(k_pos, end)
        return rotate_half_split(q, cq.to(q.dtype), sq.to(q.dtype)), rotate_half_split(k, ck.to(k.dtype), sk.to(k.dtype))


CHUNK_ELEMENTS = 1 << 24  # complex per-pair products DynamicRotary.score holds at once (128 MB)


@ENCODINGS.register("dynamic_rotary")
class DynamicRotary(Rotary):
    """Dynamic scaling evaluated exactly for a left-to-right reader (module docstring).

    The logit of query t and key j <= t is

        q_t^T R((t - j) theta(t)) k_j * a(t)^2 / sqrt(Dh),   theta(t), a(t) = rule(max(1, (t + 1) / L)),

    where ``rule`` is the static scaling the dynamic one follows (``ntk`` for
    ``dynamic_ntk``, as transformers' ``_compute_dynamic_ntk_parameters`` with factor 1 and
    seq_len = t + 1). ``rotate`` applies plain RoPE, exact for queries t < L (factor 1),
    and the ``score`` hook rewrites the rows of later queries. Because q and k arrive
    already rotated by their own positions with theta(1), writing each rotated pair
    (a_i, b_i) as z_i = a_i + i b_i (RoFormer's complex form of the rotation),

        q_t^T R((t - j) theta(t)) k_j = Re sum_i z_q,i conj(z_k,i) e^{i phi_i},
        phi_i = (t - j) (theta_i(t) - theta_i(1)),

    computed per chunk of queries over the keys the chunk can see, in complex64 with
    float64 angles (one elementwise product and one batched matmul). The score hook
    needs the explicit attention path, so it is active only at an evaluation scale
    above 1 (:meth:`active_hooks`); at scale 1 (training, and evaluation at the
    training length) every query has factor 1 and the fused path is exact.
    """

    dynamic = True

    def rotation_factor(self) -> float:
        return 1.0

    def active_hooks(self) -> frozenset[str]:
        hooks = type(self).hooks()
        return hooks if self.scale > 1 else hooks - {"score"}

    @property
    def cacheable(self) -> bool:
        """Plain RoPE at scale 1; beyond it the score hook rewrites whole rows of logits."""
        return "score" not in self.active_hooks()

    def query_frequencies(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(inverse frequencies [n, r/2], attention factors [n]) of queries at positions
        0 .. n-1 (float64, cached), from the factor of each one's context length."""
        key = ("per_query", n)
        if key not in self._tables:
            L = self.dims.train_len
            rows = [self.frequencies(max(1.0, (t + 1) / L)) for t in range(n)]
            self._tables[key] = (torch.stack([r[0] for r in rows]), torch.tensor([r[1] for r in rows], dtype=torch.float64))
        return self._tables[key]

    def rotate(self, q, k, q_pos, k_pos):
        if "score" not in self.active_hooks() and int(q_pos.max()) >= self.dims.train_len:
            raise ValueError(f"{self.params.scaling}: positions beyond the training length {self.dims.train_len} "
                             "at scale 1; call set_scale(T / L) first so the model takes the exact attention path")
        return super().rotate(q, k, q_pos, k_pos)

    def score(self, q, k, scores, q_pos, k_pos):
        rows = (q_pos >= self.dims.train_len).nonzero().squeeze(1)  # queries whose factor is above 1
        if len(rows) == 0:
            return scores
        n = int(q_pos.max()) + 1
        inv_freq, attention = self.query_frequencies(max(n, 1 << (n - 1).bit_length()))
        delta = (inv_freq - inv_freq[0]).to(q.device)  # [n, r/2]: theta(t) - theta(1)
        attention = attention.to(q.device).float()
        B, H, Tk, Dh = k.shape
        half = self.rotary_dim // 2
        q, k = q.float(), k.float()
        zq = torch.complex(q[..., :half], q[..., half : 2 * half])  # [B, H, Tq, r/2]: pair i as a_i + i b_i
        zk = torch.complex(k[..., :half], k[..., half : 2 * half]).conj()  # [B, H, Tk, r/2]
        out = scores.clone()
        for part in rows.split(max(1, CHUNK_ELEMENTS // (B * H * Tk * half))):
            future = torch.isneginf(scores[:, :, part])  # [B|1, H|1, c, Tk]: the model's causal mask
            cols = (~future[0, 0]).any(dim=0).nonzero().squeeze(1)  # keys any query of the chunk sees
            t = q_pos[part]  # [c]
            phi = (t[:, None] - k_pos[cols][None, :]).double()[..., None] * delta[t][:, None, :]  # [c, Tk', r/2]
            turn = torch.polar(torch.ones_like(phi), phi).to(zq.dtype)  # e^{i phi}
            # Re sum_i z_q conj(z_k) e^{i phi} = P cos(phi) - Q sin(phi)
            rotary = ((zk[:, :, None, cols] * turn) @ zq[:, :, part, :, None]).real.squeeze(-1)  # [B, H, c, Tk']
            rest = q[:, :, part, 2 * half :] @ k[:, :, cols, 2 * half :].transpose(-2, -1)  # dimensions that do not rotate
            logits = (rotary * attention[t][:, None] ** 2 + rest) / math.sqrt(Dh)
            logits = logits.to(scores.dtype).masked_fill(future[..., cols], float("-inf"))
            out[:, :, part[:, None], cols[None, :]] = logits
        return out
