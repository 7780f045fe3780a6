"""What every generated task shares: the example type, the task base class and format helpers."""

from __future__ import annotations

import abc
import random
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from suite.core.registry import Registry

PAD = " "  # leading filler that makes up the remainder of an exact length
LETTERS = string.ascii_lowercase
KEY_LETTERS = string.ascii_letters  # one-byte keys: 52, lower and upper case
DIGITS = string.digits


@dataclass(frozen=True)
class Example:
    prompt: str
    answer: str  # ends with "\n"
    meta: Mapping[str, int | str]  # per-example facts for reporting, e.g. {"depth": 3}
    supervised: tuple[int, ...] = ()
    """Offsets of prompt bytes that the text before them determines (an earlier query's value
    in MQAR): trained on like the answer, so one example teaches several lookups (Arora et
    al. 2023 train on every query). Evaluation scores the answer alone."""

    @property
    def text(self) -> str:
        return self.prompt + self.answer


class SyntheticTask(abc.ABC):
    """One task: ``example(rng, length)`` returns an Example of exactly ``length`` chars."""

    name: ClassVar[str]
    version: ClassVar[int]
    description: ClassVar[str]
    min_length: ClassVar[int]  # the smallest length the format fits in
    chance: ClassVar[float | None] = None  # exact-match accuracy of a uniform guess, where the answer is one of a few

    def example(self, rng: random.Random, length: int) -> Example:
        if length < self.min_length:
            raise ValueError(
                f"task {self.name!r} needs length >= {self.min_length}, got {length}"
            )
        ex = self.make(rng, length)
        # A guard, not a check on the caller: every subclass must hit length exactly.
        assert len(ex.prompt) + len(ex.answer) == length, (self.name, length, ex)
        return ex

    @abc.abstractmethod
    def make(self, rng: random.Random, length: int) -> Example:
        """Build one example of exactly ``length`` characters (``length >= min_length``)."""


TASKS: Registry[SyntheticTask] = Registry("synthetic task", SyntheticTask, members=(
    "suite.data.synthetic",  # copy, reverse, selective copy, counting, addition, parity, brackets
    "suite.data.memory_tasks",  # associative and single-query recall, flip-flop, passkey
    "suite.data.ruler_tasks",  # the RULER-style battery
))
"""Generators by name (``@TASKS.register()`` on each class registers it under its ``name``)."""


def fit(length: int, fixed: int, unit: int) -> tuple[int, str]:
    """Most units of ``unit`` chars that fit beside ``fixed`` chars, and the pad for the rest.

    ``fixed + n * unit + len(pad) == length``; the pad depends on ``length`` only.
    """
    n, rest = divmod(length - fixed, unit)
    return n, PAD * rest


def random_string(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def cycled(text: str, n: int) -> str:
    """The first ``n`` characters of ``text`` repeated."""
    return (text * (n // len(text) + 1))[:n]


def add_decimal(a: str, b: str) -> str:
    """Sum of two equal-width digit strings, one digit wider, zero-padded.

    Done digit by digit because Python refuses ``str(int)`` beyond 4300 digits.
    """
    out, carry = [], 0
    for x, y in zip(reversed(a), reversed(b)):
        carry, digit = divmod(int(x) + int(y) + carry, 10)
        out.append(DIGITS[digit])
    out.append(DIGITS[carry])
    return "".join(reversed(out))
