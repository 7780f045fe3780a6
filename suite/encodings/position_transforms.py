"""Training-time position-id transforms: which ids a training sequence reads.

A contract point of its own, separate from the encoding: the encoding says how an id
becomes a rotation, an embedding or a bias; a transform says which ids the model reads
while it trains (evaluation always reads 0 .. T-1). An encoding spec names one with
``train_positions: {impl: pose, params: {...}}``; it changes the weights, so it is part
of the training run's id, and any encoding that reads the model's ids can be trained so
(one whose own ``positions`` hook draws ids, such as randomized positions, cannot).

The model reads one row of ids per batch (the hooks take the ids of a sequence), so a
transform draws once per training batch where the authors draw once per sequence: the
same distribution of ids, fewer independent draws per step.

Transforms draw from an ``rng`` with the methods of the generator their authors' code
uses: Python's ``randint(a, b)`` and ``sample(population, k)`` (PoSE, randomized ids), or
numpy's ``uniform(low, high, size)`` (CAPE). In training that is :class:`TorchRng`, over
torch's global generator (seeded by the run's seed, as dropout is); in the golden tests
``random.Random`` or ``numpy.random.RandomState``, as the authors', so a seeded draw
reproduces theirs exactly.

Most transforms draw integer ids. A ``continuous`` one (CAPE) draws real-valued ids; the
model accepts it only for an encoding whose hooks take them
(``PositionalEncoding.continuous_positions``, the sinusoidal table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from suite.core.registry import Registry
from suite.encodings.params import ParamsError, validate_params


class TorchRng:
    """Python's ``random`` interface over torch's global generator."""

    @staticmethod
    def randint(a: int, b: int) -> int:
        """An integer in [a, b], both included (as ``random.randint``)."""
        return int(torch.randint(a, b + 1, ()))

    @staticmethod
    def sample(population: range, k: int) -> list[int]:
        """k distinct elements of a range, in random order (as ``random.sample``)."""
        picked = torch.randperm(len(population))[:k]
        return [population[int(i)] for i in picked]

    @staticmethod
    def uniform(low: float, high: float, size: int) -> list[float]:
        """``size`` reals in [low, high) (as ``numpy.random.uniform``: low + (high - low) u)."""
        return (low + (high - low) * torch.rand(size, dtype=torch.float64)).tolist()


class PositionTransform:
    """The base class: ``draw(length, rng)`` gives the ``length`` training ids of one
    sequence (increasing integers, or reals for a :attr:`continuous` transform);
    :attr:`max_position` bounds them (an encoding must represent that many positions)."""

    Params: ClassVar[type]
    continuous: ClassVar[bool] = False  # True: real-valued ids (only for encodings that take them)

    def __init__(self, params):
        self.params = params

    @property
    def max_position(self) -> int:
        raise NotImplementedError

    def draw(self, length: int, rng) -> list[int]:
        raise NotImplementedError

    def __call__(self, length: int, device) -> torch.Tensor:
        dtype = torch.float64 if self.continuous else torch.long  # float64: a shifted id keeps its phase
        return torch.tensor(self.draw(length, TorchRng()), dtype=dtype, device=device)


POSITION_TRANSFORMS: Registry[PositionTransform] = Registry("position transform", PositionTransform)


@dataclass(frozen=True)
class PoseParams:
    target_length: int = 1024  # the context the ids cover: PoSE's scaled_max_position_embeddings

    def __post_init__(self):
        if self.target_length < 2:
            raise ValueError(f"target_length must be >= 2, got {self.target_length}")


@POSITION_TRANSFORMS.register("pose")
class Pose(PositionTransform):
    """Positional skip-wise training (Zhu et al. 2024, "PoSE: Efficient Context Window
    Extension of LLMs via Positional Skip-wise Training", ICLR 2024, Sec. 3.2), as the
    authors' ``train_preprocess_function_pose`` (dwzhu-pku/PoSE, ``src/train_pose.py``):
    the window of L ids is cut in two chunks, the first of ``rt1`` ~ U{1 .. (L+1)//2}
    ids 0 .. rt1-1, the second continuing at rt1 + ``rt``, ``rt`` ~ U{0 .. target - L},
    so relative distances up to the target length are trained within a window of L.
    The authors also draw where the second chunk's text ends in a five-times-longer
    document (``rt2``); the tokens here are the window's own, contiguous, but the draw is
    made and discarded all the same, so that a seeded draw reproduces theirs exactly."""

    Params = PoseParams

    @property
    def max_position(self) -> int:
        return self.params.target_length

    def draw(self, length: int, rng) -> list[int]:
        if length > self.params.target_length:
            raise ValueError(f"pose: a window of {length} exceeds target_length {self.params.target_length}")
        rt1 = rng.randint(1, (length + 1) // 2)
        rng.randint(length, 5 * length)  # the authors' rt2 (their text's end), unused here
        rt = rng.randint(0, self.params.target_length - length)
        return list(range(rt1)) + [i + rt for i in range(rt1, length)]


@dataclass(frozen=True)
class RandomizedIdsParams:
    max_position: int = 1024  # ids are drawn from [0, max_position)

    def __post_init__(self):
        if self.max_position < 1:
            raise ValueError(f"max_position must be >= 1, got {self.max_position}")


@POSITION_TRANSFORMS.register("randomized")
class RandomizedIds(PositionTransform):
    """Randomized positions (Ruoss et al. 2023, "Randomized Positional Encodings Boost
    Length Generalization of Transformers", Sec. 3) as a training-time transform: a
    sorted uniform sample of L ids from [0, max_position), as PoSE's authors implement it
    (``train_preprocess_function_randomized``: ``random.sample`` then ``sort``), one draw
    per sequence and evaluation on 0 .. T-1. (The ``randomized`` encoding wraps an
    encoding instead, and draws per layer and at evaluation, as Ruoss et al.'s code.)"""

    Params = RandomizedIdsParams

    @property
    def max_position(self) -> int:
        return self.params.max_position

    def draw(self, length: int, rng) -> list[int]:
        if length > self.params.max_position:
            raise ValueError(f"randomized ids: a window of {length} exceeds max_position {self.params.max_position}")
        return sorted(rng.sample(range(self.params.max_position), length))


@dataclass(frozen=True)
class CapeParams:
    max_global_shift: float = 0.0  # delta ~ U[-max, max], one per sequence
    max_local_shift: float = 0.0  # epsilon_t ~ U[-max, max], one per token
    max_global_scaling: float = 1.0  # lambda: log lambda ~ U[-log max, log max], one per sequence

    def __post_init__(self):
        if self.max_global_shift < 0 or self.max_local_shift < 0:
            raise ValueError(f"CAPE's shifts must be >= 0, got max_global_shift {self.max_global_shift}, "
                             f"max_local_shift {self.max_local_shift}")
        if self.max_global_scaling < 1:
            raise ValueError(f"max_global_scaling must be >= 1, got {self.max_global_scaling}")


@POSITION_TRANSFORMS.register("cape")
class Cape(PositionTransform):
    """Continuous augmented positions (Likhomanenko et al. 2021, "CAPE: Encoding Relative
    Positions with Continuous Augmented Positional Embeddings", NeurIPS 2021, Sec. 3):
    the ids of a training sequence are (t + delta + epsilon_t) x lambda, with a global
    shift delta ~ U[-Delta, Delta], a local shift epsilon_t ~ U[-eps, eps] per token and
    a global scaling log lambda ~ U[-log s, log s], so an absolute encoding cannot rely
    on absolute positions and learns relative ones; evaluation reads 0 .. T-1. Drawn as
    Meta's implementation in Demucs (``demucs.transformer.create_sin_embedding_cape``,
    demucs==4.0.1, which the golden test runs): delta, then every epsilon_t, then log
    lambda, each with ``numpy.random.uniform``, even when its bound is 0. Their
    ``mean_normalize`` (ids centred on the sequence's mean) is left out: this contract's
    evaluation reads 0 .. T-1, which a centred training would not match."""

    Params = CapeParams
    continuous = True

    @property
    def max_position(self) -> float:
        return math.inf  # shifts and scalings reach any real id: only for unbounded encodings

    def draw(self, length: int, rng) -> list[float]:
        p = self.params
        delta = float(rng.uniform(-p.max_global_shift, p.max_global_shift, 1)[0])
        local = rng.uniform(-p.max_local_shift, p.max_local_shift, length)
        log_lambda = float(rng.uniform(-math.log(p.max_global_scaling), math.log(p.max_global_scaling), 1)[0])
        return [(t + delta + float(local[t])) * math.exp(log_lambda) for t in range(length)]


def build_transform(impl: str, params: dict) -> PositionTransform:
    """The transform ``impl`` with ``params`` (ValueError naming what is wrong)."""
    try:
        cls = POSITION_TRANSFORMS.get(impl)
    except (KeyError, TypeError) as exc:
        raise ValueError(str(exc).strip('"')) from None
    try:
        return cls(validate_params(cls.Params, params))
    except ParamsError as exc:
        raise ValueError(f"{impl}: {exc}") from None
