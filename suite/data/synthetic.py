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
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..registry import did_you_mean

PAD = " "  # leading filler that makes up the remainder of an exact length
LETTERS = string.ascii_lowercase
DIGITS = string.digits


@dataclass(frozen=True)
class Example:
    prompt: str
    answer: str  # ends with "\n"
    meta: Mapping[str, int | str]  # per-example facts for reporting, e.g. {"depth": 3}

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


class AssocRecall(SyntheticTask):
    """Multi-query associative recall (Arora et al. 2023, "Zoology: Measuring and
    Improving Recall in Efficient Language Models", MQAR).

    Format (version 1): ``PAD* k:v (" " k:v)* " ? " q1 " " q2 " " q3 " " q4 "="``
    then the four values ``"v1v2v3v4\\n"``. Keys are distinct, ``KEY_WIDTH`` lower-case
    letters (wider only past ~100k characters, when 3-letter keys run out); values are
    one digit; the four queries are distinct keys from the context, in random order.
    As many pairs as fit, then 0-5 PAD spaces. length 47:
    ``"xqa:3 bor:0 kep:7 mvi:3 ? kep xqa mvi bor="`` + ``"7330\\n"``.
    """

    name = "assoc_recall"
    version = 1
    description = "recall the values of 4 queried keys among key:value pairs"
    n_queries: ClassVar[int] = 4
    key_width: ClassVar[int] = 3
    min_length = n_queries * (key_width + 3) + n_queries * (key_width + 2) + 3

    def layout(self, length: int) -> tuple[int, int, str]:
        """Key width, number of pairs and pad for ``length``."""
        width = self.key_width
        while True:
            # Pairs "kkk:v " (width+3); queries "kkk " or "kkk=" (width+1) after "? ";
            # the answer is one digit per query and "\n".
            n, pad = fit(length, fixed=self.n_queries * (width + 2) + 3, unit=width + 3)
            if n <= len(LETTERS) ** width:
                return width, n, pad
            width += 1

    def make(self, rng: random.Random, length: int) -> Example:
        width, n, pad = self.layout(length)
        keys = [_key(i, width) for i in rng.sample(range(len(LETTERS) ** width), n)]
        values = random_string(rng, DIGITS, n)
        queried = rng.sample(range(n), self.n_queries)
        context = " ".join(f"{k}:{v}" for k, v in zip(keys, values))
        queries = " ".join(keys[i] for i in queried)
        answer = "".join(values[i] for i in queried) + "\n"
        return Example(pad + context + " ? " + queries + "=", answer, {"n_pairs": n})


class Recall(AssocRecall):
    """Single-query associative recall (Arora et al. 2023, "Zoology", MQAR with one query).

    Format (version 1): :class:`AssocRecall`'s with one query, so the answer is one
    digit (chance 1/10): ``PAD* k:v (" " k:v)* " ? " q "="`` then ``v "\\n"``. The
    smallest recall task: one content lookup (an induction head: find the queried key,
    copy the digit after it), which a two-layer model learns in the default job's
    budget, so its decay with length is comparable across encodings.
    length 24: ``"  xqa:3 bor:0 ? bor="`` + ``"0\\n"``.
    """

    name = "recall"
    version = 1
    description = "recall the value of one queried key among key:value pairs"
    n_queries = 1
    min_length = n_queries * (AssocRecall.key_width + 3) + n_queries * (AssocRecall.key_width + 2) + 3
    chance = 0.1  # one digit


def _key(index: int, width: int) -> str:
    chars = []
    for _ in range(width):
        index, r = divmod(index, len(LETTERS))
        chars.append(LETTERS[r])
    return "".join(chars)


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


class FlipFlop(SyntheticTask):
    """Flip-flop language (Liu et al. 2023, "Exposing Attention Glitches with
    Flip-Flop Language Modeling").

    Format (version 1): ``PAD? (instruction bit)* "r"`` then ``bit "\\n"``. The
    instructions are ``w`` (write the bit), ``i`` (ignore the bit) and ``r`` (read:
    the bit is the last written one). The first is a write, the last a read whose
    bit is the answer; those between are i with probability ``P_IGNORE`` (0.8, the
    paper's FFL(0.8)) and w or r with 0.1 each. One PAD space when ``length`` is
    even. length 13: ``"w1i0r1w0i1r"`` + ``"0\\n"``.
    """

    name = "flip_flop"
    version = 1
    description = "the last written bit at the final read of a flip-flop sequence"
    min_length = 5
    chance = 0.5  # one bit
    p_ignore: ClassVar[float] = 0.8

    def make(self, rng: random.Random, length: int) -> Example:
        n, pad = fit(length, fixed=3, unit=2)  # final "r", its bit and "\n"
        p_write = (1 - self.p_ignore) / 2
        ops = rng.choices("wir", weights=(p_write, self.p_ignore, p_write), k=n)
        ops[0] = "w"
        bits = rng.choices("01", k=n)
        memory = ""
        for j, op in enumerate(ops):
            if op == "w":
                memory = bits[j]
            elif op == "r":
                bits[j] = memory
        body = "".join(op + bit for op, bit in zip(ops, bits))
        return Example(pad + body + "r", memory + "\n", {"n_instructions": n + 1})


class Passkey(SyntheticTask):
    """Passkey retrieval (Mohtashami & Jaggi 2023, "Landmark Attention:
    Random-Access Infinite Context Length for Transformers").

    Format (version 1): repeated ``FILLER`` text with the needle
    ``"The pass key is NNNNN. "`` inserted at a random character offset, then
    ``" Pass key:"``; answer ``"NNNNN\\n"`` (10000..99999). The filler is cut to fit
    exactly, so no pad. The depth decile ``d`` is drawn uniformly from 0..9 first and
    the offset ``p`` uniformly among the ``F + 1`` insertion points with
    ``10 * p // (F + 1) == d`` (``F`` filler characters), so ``meta["depth"] == d``.
    length 60: ``"The grassThe pass key is 50344.  is green. T Pass key:"`` + ``"50344\\n"``.
    """

    name = "passkey"
    version = 1
    description = "retrieve a 5-digit pass key hidden in filler text"
    filler: ClassVar[str] = (
        "The grass is green. The sky is blue. The sun is yellow. "
        "Here we go. There and back again. "
    )
    needle: ClassVar[str] = "The pass key is {}. "
    question: ClassVar[str] = " Pass key:"
    n_deciles: ClassVar[int] = 10
    # Enough filler that every decile has an insertion point: F + 1 >= 10.
    min_length = len(needle.format(10000)) + len(question) + 6 + 9

    def make(self, rng: random.Random, length: int) -> Example:
        key = str(rng.randrange(10_000, 100_000))
        needle = self.needle.format(key)
        n_filler = length - len(needle) - len(self.question) - len(key) - 1
        slots = n_filler + 1
        depth = rng.randrange(self.n_deciles)
        lo = -(-depth * slots // self.n_deciles)  # ceil division
        hi = -(-(depth + 1) * slots // self.n_deciles)
        offset = rng.randrange(lo, hi)
        filler = cycled(self.filler, n_filler)
        prompt = filler[:offset] + needle + filler[offset:] + self.question
        return Example(prompt, key + "\n", {"depth": depth})


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


TASKS: dict[str, type[SyntheticTask]] = {
    task.name: task
    for task in (
        Copy, Reverse, AssocRecall, Recall, SelectiveCopy, Counting, FlipFlop, Passkey,
        Addition, Parity, Brackets,
    )
}


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
