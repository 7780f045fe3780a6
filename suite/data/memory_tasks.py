"""Generated tasks that test memory of the context: associative recall, flip-flop, passkey."""

from __future__ import annotations

import random
from typing import ClassVar

from suite.data.task_format import DIGITS, KEY_LETTERS, LETTERS, TASKS, Example, SyntheticTask, cycled, fit, random_string


@TASKS.register()
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


@TASKS.register()
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


@TASKS.register()
class Mqar(SyntheticTask):
    """Multi-query associative recall as Zoology trains it (Arora et al. 2023, "Zoology:
    Measuring and Improving Recall in Efficient Language Models", Sec. 3, MQAR): key-value
    pairs, then queries, each followed by its value, every query's value a target.

    Format (version 2): ``PAD? (k v)+ "?" (q v)* q`` then ``v "\\n"``: as in Zoology each
    value follows its key, and each query is a key whose next byte is its value, with no
    separators. Keys are single bytes (``KEY_LETTERS``, 52: a-z, A-Z) and distinct; values one
    digit; each query is a key of the context drawn uniformly (with replacement, so no query is
    known by elimination). Of the U = (length - 2) // 2 two-byte units, P = min((U + 1) // 2, 52)
    are pairs and the rest queries, so from 208 bytes on the pairs stop growing and the added
    length is queries further from the pairs they ask about; 0-1 PAD space. The answer is the
    last query's value (chance 1/10); the earlier queries' values are :attr:`Example.supervised`,
    trained on as Zoology trains every query. (Version 1 put a ":" after each key and "=" after
    each query, so a value sat two bytes after its key: docs/concepts/tasks.md, "Task recipes and learning curves".)
    length 16: ``"T0v7i1y6?y6v7v"`` + ``"7\\n"``.
    """

    name = "mqar"
    version = 2
    description = "recall the value of each queried key among key-value pairs, every query a target"
    min_length = 6  # one pair "kv", "?", the query "k" and its answer "v\n"
    chance = 0.1  # one digit
    max_pairs: ClassVar[int] = len(KEY_LETTERS)

    def make(self, rng: random.Random, length: int) -> Example:
        units, pad = fit(length, fixed=2, unit=2)  # "?" and "\n", and units of "kv" (the last query's value is the answer's)
        n_pairs = min((units + 1) // 2, self.max_pairs)
        keys = rng.sample(KEY_LETTERS, n_pairs)
        values = random_string(rng, DIGITS, n_pairs)
        asked = [rng.randrange(n_pairs) for _ in range(units - n_pairs)]
        context = pad + "".join(k + v for k, v in zip(keys, values)) + "?"
        queries = "".join(keys[i] + values[i] for i in asked[:-1])
        supervised = tuple(len(context) + 2 * j + 1 for j in range(len(asked) - 1))
        return Example(context + queries + keys[asked[-1]], values[asked[-1]] + "\n",
                       {"n_pairs": n_pairs, "n_queries": len(asked)}, supervised)


def _key(index: int, width: int) -> str:
    chars = []
    for _ in range(width):
        index, r = divmod(index, len(LETTERS))
        chars.append(LETTERS[r])
    return "".join(chars)


@TASKS.register()
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


@TASKS.register()
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
