"""Deterministic synthetic tasks for length generalization.

Contract
--------
Every example is plain ASCII text, a ``prompt`` followed by an ``answer``:

* ``len(prompt + answer) == length`` exactly, for any ``length >= task.min_length``
  (byte-level models: one character is one token). A model is trained at lengths up
  to L and tested at s x L, so "length" is the whole sequence, not the input alone.
* The prompt ends with the task's delimiter (``=``, ``:`` or the read instruction
  ``r``); the answer ends with ``"\\n"``, the stop sequence for greedy decoding.
  An answer is correct when the model reproduces it exactly.
* Length never leaks the answer: for a given length, every example of a task has
  the same prompt length and the same answer length (numbers are zero-padded to a
  width fixed by the length, and bits or labels are one character).
* Content grows with length (more symbols to copy, more pairs, more instructions,
  more filler); where ``length`` does not divide evenly into the task's units, the
  prompt starts with a few spaces (``PAD``). The amount depends on ``length`` only.
* ``generate(task, n, length, seed)`` is a pure function of its arguments: example
  ``i`` has its own ``random.Random`` seeded by the string
  ``"{task}:{version}:{length}:{seed}:{i}"`` (string seeds hash with SHA-512, so
  the stream does not depend on the process, ``PYTHONHASHSEED`` or the global
  ``random`` state), so the first k examples of a longer list are the same k.
  A task's ``version`` is part of that seed and must be bumped whenever its text
  format or sampling changes.

Each task is one small class whose docstring shows its format and cites the paper
it comes from; ``TASKS`` maps names to classes and ``get_task`` instantiates one.
"""

from __future__ import annotations

import abc
import random
from typing import ClassVar

from suite.core.registry import did_you_mean
from suite.data.task_format import DIGITS, LETTERS, TASKS, Example, SyntheticTask, add_decimal, fit, random_string


class _Transduction(SyntheticTask):
    """A random string over ``LETTERS`` and then ``transform`` of it; see subclasses."""

    min_length = 4

    @staticmethod
    @abc.abstractmethod
    def transform(s: str) -> str: ...

    def make(self, rng: random.Random, length: int) -> Example:
        n, pad = fit(length, fixed=2, unit=2)  # "=" and "\n"
        s = random_string(rng, LETTERS, n)
        return Example(pad + s + "=", self.transform(s) + "\n", {"n": n})


@TASKS.register()
class Copy(_Transduction):
    """Copy a string (Deletang et al. 2023, "Neural Networks and the Chomsky
    Hierarchy", duplicate string; Ruoss et al. 2023, "Randomized Positional
    Encodings"; Kazemnejad et al. 2023, "The Impact of Positional Encoding on
    Length Generalization").

    Format (version 1): ``PAD? s "=" s "\\n"``, ``s`` uniform over a-z, as long as
    fits; one space of PAD when ``length`` is odd. length 11: ``" qkzx="`` + ``"qkzx\\n"``.
    """

    name = "copy"
    version = 1
    description = "repeat a random string"

    @staticmethod
    def transform(s: str) -> str:
        return s


@TASKS.register()
class Reverse(_Transduction):
    """Reverse a string (Deletang et al. 2023, "Neural Networks and the Chomsky
    Hierarchy"; Ruoss et al. 2023, "Randomized Positional Encodings"; Kazemnejad
    et al. 2023, "The Impact of Positional Encoding on Length Generalization").

    Format (version 1): ``PAD? s "=" reversed(s) "\\n"``, as copy.
    length 10: ``"qkzx="`` + ``"xzkq\\n"``.
    """

    name = "reverse"
    version = 1
    description = "reverse a random string"

    @staticmethod
    def transform(s: str) -> str:
        return s[::-1]


@TASKS.register()
class SelectiveCopy(SyntheticTask):
    """Selective copy (Golovneva et al. 2024, "Contextual Position Encoding: Learning
    to Count What's Important"; after Gu & Dao 2023, Mamba).

    Format (version 1): ``s "=" letters(s) "\\n"``: ``s`` is mostly ``NOISE`` with
    ``k = max(1, (length - 2) // 9)`` letters (about one in eight) at random
    positions; the answer is those letters in order. No pad: ``len(s) = length - 2 - k``.
    length 20: ``"..k...h.........="`` + ``"kh\\n"``.
    """

    name = "selective_copy"
    version = 1
    description = "copy the letters of a string, skipping the noise"
    min_length = 4
    noise: ClassVar[str] = "."

    def make(self, rng: random.Random, length: int) -> Example:
        k = max(1, (length - 2) // 9)
        m = length - 2 - k
        chars = [self.noise] * m
        letters = random_string(rng, LETTERS, k)
        for pos, letter in zip(sorted(rng.sample(range(m), k)), letters):
            chars[pos] = letter
        return Example("".join(chars) + "=", letters + "\n", {"n_marked": k})


@TASKS.register()
class Counting(SyntheticTask):
    """Count a token's occurrences (Golovneva et al. 2024, "Contextual Position
    Encoding: Learning to Count What's Important").

    Format (version 1): ``s " " t "=" count "\\n"``: ``s`` uniform over ``ALPHABET``,
    ``t`` one letter of it, count zero-padded to the digits of ``length`` (so it
    always fits and never changes the layout). No pad.
    length 12: ``"hbadeb b="`` + ``"02\\n"``.
    """

    name = "counting"
    version = 1
    description = "count how often a letter occurs in a string"
    min_length = 6
    alphabet: ClassVar[str] = "abcdefgh"

    def make(self, rng: random.Random, length: int) -> Example:
        width = len(str(length))
        s = random_string(rng, self.alphabet, length - 4 - width)
        token = rng.choice(self.alphabet)
        answer = str(s.count(token)).zfill(width) + "\n"
        return Example(f"{s} {token}=", answer, {"n": len(s)})


@TASKS.register()
class Addition(SyntheticTask):
    """Multi-digit addition (Kazemnejad et al. 2023, "The Impact of Positional
    Encoding on Length Generalization"; Ruoss et al. 2023, "Randomized Positional
    Encodings").

    Format (version 1): ``PAD* a "+" b "=" sum "\\n"``: ``a`` and ``b`` have ``n``
    digits each, uniform (so may start with zeros), most significant first; the sum
    is zero-padded to ``n + 1`` digits. ``n = (length - 4) // 3`` and 0-2 leading
    spaces make up the rest. length 18: ``"  4071+3952="`` + ``"08023\\n"``.
    """

    name = "addition"
    version = 1
    description = "add two n-digit numbers"
    min_length = 7

    def make(self, rng: random.Random, length: int) -> Example:
        n, pad = fit(length, fixed=4, unit=3)
        a = random_string(rng, DIGITS, n)
        b = random_string(rng, DIGITS, n)
        return Example(f"{pad}{a}+{b}=", add_decimal(a, b) + "\n", {"digits": n})


@TASKS.register()
class Parity(SyntheticTask):
    """Parity of a bit string (Deletang et al. 2023, "Neural Networks and the
    Chomsky Hierarchy", parity check; Ruoss et al. 2023, "Randomized Positional
    Encodings").

    Format (version 1): ``bits "=" parity "\\n"``: uniform bits, parity 1 when the
    number of ones is odd. No pad. length 9: ``"101101="`` + ``"0\\n"``.
    """

    name = "parity"
    version = 1
    description = "whether a bit string has an odd number of ones"
    min_length = 4
    chance = 0.5  # one bit

    def make(self, rng: random.Random, length: int) -> Example:
        bits = random_string(rng, "01", length - 3)
        return Example(bits + "=", str(bits.count("1") % 2) + "\n", {"n": len(bits)})


@TASKS.register()
class Brackets(SyntheticTask):
    """Balanced brackets, Dyck-2 recognition (Ebrahimi et al. 2020, "How Can
    Self-Attention Networks Recognize Dyck-n Languages?"; in the Chomsky-hierarchy
    setting of Deletang et al. 2023, "Neural Networks and the Chomsky Hierarchy").

    Format (version 1): ``PAD? s "=" label "\\n"`` with ``s`` over ``()[]`` of even
    length, label ``Y`` (balanced) or ``N``, each with probability 1/2. A balanced
    ``s`` is a random walk that never drops below depth 0 and ends at 0, types
    uniform; an unbalanced one is a balanced word with two different characters
    swapped (swapping again while still balanced), so both classes have equal counts of
    each bracket and counting alone never decides. One PAD space when ``length``
    is even.
    length 9: ``"([])[]="`` + ``"Y\\n"``; ``"([)][]="`` + ``"N\\n"``.
    """

    name = "brackets"
    version = 1
    description = "whether a string of () and [] brackets is balanced"
    min_length = 5
    chance = 0.5  # Y or N, each with probability 1/2
    pairs: ClassVar[dict[str, str]] = {"(": ")", "[": "]"}

    def make(self, rng: random.Random, length: int) -> Example:
        n, pad = fit(length, fixed=3, unit=2)  # "=", label, "\n"
        label = "Y" if rng.random() < 0.5 else "N"
        chars = self.balanced(rng, 2 * n)
        while label == "N" and self.is_balanced(chars):
            i, j = rng.sample(range(len(chars)), 2)
            chars[i], chars[j] = chars[j], chars[i]
        return Example(pad + "".join(chars) + "=", label + "\n", {"label": label})

    def balanced(self, rng: random.Random, m: int) -> list[str]:
        opens = list(self.pairs)
        chars, stack = [], []
        for remaining in range(m, 0, -1):
            if stack and (len(stack) == remaining or rng.random() < 0.5):
                chars.append(self.pairs[stack.pop()])
            else:
                stack.append(rng.choice(opens))
                chars.append(stack[-1])
        return chars

    def is_balanced(self, chars: list[str]) -> bool:
        stack = []
        for c in chars:
            if c in self.pairs:
                stack.append(self.pairs[c])
            elif not stack or stack.pop() != c:
                return False
        return not stack


def get_task(name: str) -> SyntheticTask:
    try:
        return TASKS[name]()
    except KeyError:
        hint = did_you_mean(name, TASKS)
        raise ValueError(
            f"unknown synthetic task {name!r}{hint} (known: {', '.join(sorted(TASKS))})"
        ) from None


def generate(task_name: str, n: int, length: int, seed: int) -> list[Example]:
    """``n`` examples of exactly ``length`` characters; a pure function of its arguments."""
    task = get_task(task_name)
    prefix = f"{task.name}:{task.version}:{length}:{seed}"
    return [task.example(random.Random(f"{prefix}:{i}"), length) for i in range(n)]
