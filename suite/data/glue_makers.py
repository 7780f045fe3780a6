"""How each offline GLUE-style task makes one example pair from real lines of code: the
``make`` functions of :data:`suite.data.glue_tasks.TASKS` and the small pure helpers they share.
Each takes ``(rng, pool, known)`` and returns (label-0 parts, label-1 parts), or None to draw again."""

from __future__ import annotations

import itertools
import random
import string

PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))  # every part of every example is printable ASCII


# ---- small pure helpers ------------------------------------------------------


def _swap(s: str, i: int, j: int) -> str:
    chars = list(s)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def _distinct_positions(rng: random.Random, s: str) -> tuple[int, int]:
    """Two positions holding different characters (s has several distinct ones)."""
    while True:
        i, j = sorted(rng.sample(range(len(s)), 2))
        if s[i] != s[j]:
            return i, j


def _disjoint_adjacent_swaps(rng: random.Random, s: str, k: int) -> list[int] | None:
    """k starts i of non-overlapping pairs (i, i+1) with s[i] != s[i+1], or None.

    Each such swap changes exactly two positions, so k swaps change exactly 2k."""
    starts = [i for i in range(len(s) - 1) if s[i] != s[i + 1]]
    rng.shuffle(starts)
    chosen: list[int] = []
    used: set[int] = set()
    for i in starts:
        if i not in used and i + 1 not in used:
            chosen.append(i)
            used.update((i, i + 1))
            if len(chosen) == k:
                return chosen
    return None


def _span_and_shuffle(rng: random.Random, line: str) -> tuple[str, str] | None:
    """A span of 6..16 characters and a permutation of it that is not a span of line."""
    size = rng.randint(6, 16)
    start = rng.randint(0, len(line) - size)
    span = line[start : start + size]
    for _ in range(20):
        shuffled = "".join(rng.sample(span, len(span)))
        if shuffled not in line:
            return span, shuffled
    return None


# ---- the eight generators ----------------------------------------------------


def _acceptability(rng, pool, known):
    line = rng.choice(pool)
    swapped = _swap(line, *_distinct_positions(rng, line))
    if swapped in known:  # it would be a real line after all
        return None
    return (swapped, None), (line, None)


_ORDER_FILLER = string.ascii_lowercase
_ORDER_LENGTHS = (8, 64)


def _order(rng, pool, known):
    chars = [rng.choice(_ORDER_FILLER) for _ in range(rng.randint(*_ORDER_LENGTHS))]
    first, second = sorted(rng.sample(range(len(chars)), 2))

    def mark(a_at: int, b_at: int) -> str:
        marked = chars.copy()
        marked[a_at], marked[b_at] = "A", "B"
        return "".join(marked)

    return (mark(second, first), None), (mark(first, second), None)


def _paraphrase(rng, pool, known):
    line = rng.choice(pool)
    i = rng.choice([i for i in range(len(line) - 1) if line[i] != line[i + 1]])
    return (line, _swap(line, i, i + 1)), (line, line)


SIMILARITY_MAX = 5


def _similarity(rng, pool, known):
    line = rng.choice(pool)
    starts = _disjoint_adjacent_swaps(rng, line, SIMILARITY_MAX)
    if starts is None:
        return None
    variants = []
    for score in range(SIMILARITY_MAX + 1):
        changed = line
        for i in starts[: SIMILARITY_MAX - score]:
            changed = _swap(changed, i, i + 1)
        variants.append((line, changed))
    return tuple(variants)


DUPLICATE_MAX_PAD = 6  # 60 + 1 + 60 + 6 <= suite.data.glue_tasks.MAX_BYTES


def _duplicate(rng, pool, known):
    line = rng.choice(pool)
    size = rng.randint(2, 8)
    start = rng.randint(0, len(line) - size)
    block, rest = line[start : start + size], line[:start] + line[start + size :]
    at = rng.randint(0, len(rest))
    moved = rest[:at] + block + rest[at:]
    if moved == line:
        return None
    pad = rng.randint(0, DUPLICATE_MAX_PAD)
    left = rng.randint(0, pad)

    def shift(s: str) -> str:
        return " " * left + s + " " * (pad - left)

    return (line, shift(moved)), (line, shift(line))


def _inference(rng, pool, known):
    line = rng.choice(pool)
    found = _span_and_shuffle(rng, line)
    if found is None:
        return None
    span, shuffled = found
    foreign = sorted(PRINTABLE - set(line))
    contradiction = list(span)
    for i in rng.sample(range(len(span)), rng.randint(1, 3)):
        contradiction[i] = rng.choice(foreign)
    return (line, span), (line, shuffled), (line, "".join(contradiction))


def _rte(rng, pool, known):
    line = rng.choice(pool)
    found = _span_and_shuffle(rng, line)
    if found is None:
        return None
    span, shuffled = found
    return (line, span), (line, shuffled)


_QA_KEYS = tuple("".join(p) for p in itertools.product(string.ascii_lowercase, repeat=2))
_QA_VALUES = tuple(f"{v:02d}" for v in range(100))


def _qa_alignment(rng, pool, known):
    n = rng.randint(3, 8)
    keys, values = rng.sample(_QA_KEYS, n), rng.sample(_QA_VALUES, n)
    table = "; ".join(f"{k}={v}" for k, v in zip(keys, values))
    asked = rng.randrange(n)
    other = rng.choice([i for i in range(n) if i != asked])
    return (table, f"{keys[asked]} {values[asked]}"), (table, f"{keys[asked]} {values[other]}")
