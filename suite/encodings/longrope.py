"""LongRoPE: RoPE with a searched rescale factor per frequency.

Ding et al. 2024, "LongRoPE: Extending LLM Context Window Beyond 2 Million Tokens", Sec. 3.2:
pair i of a head rotates position n by n / (lambda_i base^(2i/d)) instead of
n / base^(2i/d), with one factor lambda_i >= 1 per frequency, found by an evolutionary search
on the model's perplexity at the target length (:mod:`suite.encodings.longrope_search`), not
by a rule; cos and sin are multiplied by the attention factor sqrt(1 + ln s / ln L) (the
authors' "su" magnitude policy, also transformers' ``longrope`` attention factor), s the
extension ratio the model is set for, L the original training length.

As the authors' code runs it (microsoft/LongRoPE@c9e56aa, ``rope/longrope.py``,
``LongRoPEScaledRotaryEmbedding``): the extension ratio is a target fixed in advance
(``target``: their ``max_position_embeddings / original_max_position_embeddings``), not the
length being read. The attention factor is computed from it once (``rope/longrope.py:48``)
and holds at every length, 1x included, as transformers' ``longrope`` also applies it; the
factors are those for the target, applied at every length beyond the training length (we
take the plain RoPE frequencies at s <= 1, transformers' ``short_factor`` of ones). Before a
search, the factors are the search's start, YaRN's split at the target (authors'
``evolution/search.py``): lambda_i = s (1 - gamma_i) + gamma_i, gamma_i YaRN's ramp over the
pair index with beta_fast 32 and beta_slow 1 (their llama settings). This is a mix of the
divisors, not of the frequencies as YaRN mixes them. A fine-tuned extension (a grid's
``extensions``) keeps its scale at its factor; its target should be that factor (the
default, 4, is the grids' extension to 4 x L).

The factors a search finds live in a persistent buffer (``searched_factors``, NaN until a
search), so a fine-tuned child's checkpoint carries them; ``factors`` in the params gives
fixed ones instead (a search published elsewhere). Not implemented: the start-token variant
(``MixedLongRoPEScaledRotaryEmbedding``, whose first n-hat positions keep plain RoPE, searched
by the authors' ``dim_piece_mono``); their examples search ``dim_mono``, the factors alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import torch

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.rotary import Frequencies, Rotary, RotaryShape, default_inv_freq, yarn_ramp


@dataclass(frozen=True)
class LongRopeParams:
    base: float = 10000.0
    # s, the extension ratio the factors and the attention factor are for (the authors'
    # max_position_embeddings / original_max_position_embeddings), whatever length is read.
    # Left out of run ids at its default: before it existed the grids' only LongRoPE runs,
    # children fine-tuned at 4x, already computed at s = 4.
    target: float = field(default=4.0, metadata={"hash_default": False})
    factors: tuple[float, ...] | None = None  # lambda_i, one per pair; None: the search's (or its start)
    beta_fast: float = 32.0  # the search's YaRN start (the authors' llama settings)
    beta_slow: float = 1.0
    # the search (evolution/default_hyper_params/dim_mono.json, the authors' defaults)
    population_size: int = 64
    iterations: int = 40  # "max_time_budget"
    mutation_numbers: int = 16
    crossover_size: int = 16
    parents_size: int = 32
    max_crossover_try: int = 20
    list_step: float = 0.01  # the grid of factor values the mutations draw from
    samples: int = 5  # sequences at the target length whose loss is the fitness (the authors' --samples 5)

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.target < 1:
            raise ValueError(f"target must be >= 1 (an extension ratio), got {self.target}")
        if self.factors is not None:
            object.__setattr__(self, "factors", tuple(float(f) for f in self.factors))
            if any(f < 1 for f in self.factors) or any(b < a for a, b in zip(self.factors, self.factors[1:])):
                raise ValueError("factors must be >= 1 and non-decreasing (LongRoPE's search space, Sec. 3.2)")
        if self.beta_fast <= self.beta_slow:
            raise ValueError("beta_fast must be greater than beta_slow")
        for name in ("population_size", "iterations", "mutation_numbers", "crossover_size", "parents_size",
                     "max_crossover_try", "samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.parents_size > self.population_size:
            raise ValueError("parents_size must not exceed population_size (the authors' assertion)")
        if not 1e-4 <= self.list_step < 1:  # finer grids near np.allclose's 1e-5 relative tolerance (the history's equality)
            raise ValueError("list_step must be in [1e-4, 1)")


def longrope_mscale(factor: float, train_len: int) -> float:
    """The "su" attention factor: sqrt(1 + ln s / ln L), 1 for s <= 1 (authors' ``_calc_mscale_su``)."""
    return 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(train_len))


def initial_factors(shape: RotaryShape, base: float, factor: float, beta_fast: float, beta_slow: float) -> torch.Tensor:
    """The search's start (authors' ``evolution/search.py``): s where YaRN interpolates, 1 where
    it keeps the frequency, YaRN's ramp between, as divisors (float64 [r/2])."""
    gamma = yarn_ramp(shape, base, beta_fast, beta_slow)
    return factor * (1 - gamma) + gamma


@ENCODINGS.register("longrope")
class LongRope(Rotary):
    """RoPE whose frequencies are divided by per-pair factors beyond L (module docstring)."""

    Params = LongRopeParams
    calibrates: ClassVar[bool] = True  # suite.training.calibration searches its factors from a parent
    calibrated_state: ClassVar[tuple[str, ...]] = ("searched_factors",)  # what a parent's checkpoint lacks

    @classmethod
    def searches(cls, params: LongRopeParams) -> bool:
        """Whether calibration has anything to search: not when ``factors`` fixes them."""
        return params.factors is None

    def __init__(self, params: LongRopeParams, dims: ModelDims):
        PositionalEncoding.__init__(self, params, dims)
        self.rotary_dim = self.exponent_dim = dims.head_dim
        self.shape = RotaryShape(dims.head_dim, dims.head_dim, dims.train_len)
        self._tables = {}
        if params.factors is not None and len(params.factors) != dims.head_dim // 2:
            raise ValueError(f"factors has {len(params.factors)} entries; head dim {dims.head_dim} has "
                             f"{dims.head_dim // 2} pairs")
        self.register_buffer("searched_factors", torch.full((dims.head_dim // 2,), math.nan, dtype=torch.float64))

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.ADJUST

    @property
    def searched(self) -> bool:
        return not bool(torch.isnan(self.searched_factors).any())

    def rescale_factors(self, factor: float) -> torch.Tensor:
        """lambda [r/2] (float64) at scale ``factor``: ones at s <= 1 (transformers' short
        factor); beyond, the factors for the target, whatever the scale: the params'
        factors, the searched ones, or the search's start at the target, in that order."""
        if factor <= 1:
            return torch.ones(self.rotary_dim // 2, dtype=torch.float64)
        if self.params.factors is not None:
            return torch.tensor(self.params.factors, dtype=torch.float64)
        if self.searched:
            return self.searched_factors.detach().double().cpu()
        return initial_factors(self.shape, self.params.base, self.params.target, self.params.beta_fast,
                               self.params.beta_slow)

    def set_factors(self, factors: torch.Tensor) -> None:
        """Use ``factors`` [r/2] from now on (the search's candidates and its result)."""
        self.searched_factors.copy_(torch.as_tensor(factors, dtype=torch.float64))
        self._tables.clear()  # the cos/sin tables were built with the old factors

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self._tables.clear()  # a checkpoint's factors replace those the tables were built with

    def frequencies(self, factor: float | None = None) -> Frequencies:
        s = self.rotation_factor() if factor is None else factor
        inv_freq = default_inv_freq(self.rotary_dim, self.params.base) / self.rescale_factors(s)
        # the target's, at every length: rope/longrope.py:48 computes it once, from the target
        return inv_freq, longrope_mscale(self.params.target, self.dims.train_len)
