"""A RULER-style battery, byte-level: the designs of RULER's tasks, not its prompts.

RULER (Hsieh et al. 2024, "RULER: What's the Real Context Size of Your Long-Context
Language Models?", Sec. 3) judges long-context ability with retrieval (needle-in-a-
haystack with several keys, several values, several queries), multi-hop tracing
(variable tracking) and aggregation (common- and frequent-word extraction). Its prompts
need a tokenizer and an instruction-tuned model; here each design is a generated task in
this package's byte format (``task_format``): an exact-length prompt, an answer ending in
"\\n", trained in distribution at lengths up to L and scored by exact match through
lm-eval at 1x..16x. As in RULER, what the model must find stays fixed while the haystack
grows with the length, so a longer example is the same problem with more distraction.

Shared conventions: the haystack is lower-case filler text (:data:`FILLER`, no digits,
no ``:``, ``=`` or ``?``), so needles (which hold those) can be found only by reading;
keys are two lower-case letters; every example pads with leading spaces to its exact
length, like the other generated tasks.
"""

from __future__ import annotations

import random
from typing import ClassVar

from suite.data.task_format import DIGITS, LETTERS, PAD, TASKS, Example, SyntheticTask, cycled

FILLER = "the grass is green and the sky is blue so here we go there and back again "


def two_letter_words(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct two-letter words, in random order."""
    return words_of(rng, n, 2)


def words_of(rng: random.Random, n: int, width: int) -> list[str]:
    """``n`` distinct lower-case words of ``width`` letters, in random order."""
    def word(i: int) -> str:
        return "".join(LETTERS[i // 26**p % 26] for p in reversed(range(width)))

    return [word(i) for i in rng.sample(range(26**width), n)]


def word_list_layout(length: int, answer_words: int, distinct) -> tuple[int, int]:
    """(word width, number of words) of a ``w (" " w)* " ?="`` list whose answer is
    ``answer_words`` words and "\n": two letters while ``distinct(n)`` words fit in
    26^2, three beyond (long lists), as many words as the length holds."""
    width = 2
    while True:
        answer = answer_words * (width + 1)
        n = (length - 2 - answer) // (width + 1)  # n words take (width + 1) n - 1, then " ?="
        if distinct(n) <= 26**width:
            return width, n
        width += 1


def haystack(rng: random.Random, needles: list[str], n_filler: int) -> tuple[str, list[int]]:
    """The needles, in the given order, inserted at random word boundaries of ``n_filler``
    chars of filler (its start, or after a space); returns the text and each needle's
    depth decile (0..9)."""
    filler = cycled(FILLER, n_filler)
    boundaries = [0] + [i + 1 for i, c in enumerate(filler) if c == " "]
    cuts = sorted(rng.choice(boundaries) for _ in needles)
    parts, depths, last = [], [], 0
    for cut, needle in zip(cuts, needles):
        parts += [filler[last:cut], needle]
        depths.append(min(9, 10 * cut // max(1, n_filler)))
        last = cut
    parts.append(filler[last:])
    return "".join(parts), depths


@TASKS.register()
class MultiKeyNeedle(SyntheticTask):
    """NIAH, multi-key (Hsieh et al. 2024, RULER, Sec. 3.1, "MK-NIAH"): ``n_needles`` needles ``"kk:ddd "``
    with distinct keys (one the target, the rest distractors of the same form) at random
    depths in the filler; the query names the target's key.

    Format (version 1): ``PAD* haystack "?" kk "="``, answer ``ddd "\\n"`` (three digits).
    Fixed: 4 needles; the filler grows with the length. length 64:
    ``"the grasqi:417 s green an..."`` ... ``"?qi="`` + ``"417\\n"``.
    """

    name = "niah_multikey"
    version = 1
    description = "retrieve the value of one key among several key:value needles in filler"
    n_needles: ClassVar[int] = 4
    needle_len: ClassVar[int] = 7  # "kk:ddd "
    min_length = n_needles * needle_len + 4 + 4 + 8  # needles, "?kk=", "ddd\n", some filler

    def make(self, rng: random.Random, length: int) -> Example:
        keys = two_letter_words(rng, self.n_needles)
        values = ["".join(rng.choices(DIGITS, k=3)) for _ in keys]
        target = rng.randrange(self.n_needles)
        text, depths = haystack(rng, [f"{k}:{v} " for k, v in zip(keys, values)],
                                length - self.n_needles * self.needle_len - 8)
        return Example(f"{text}?{keys[target]}=", values[target] + "\n", {"depth": depths[target]})


@TASKS.register()
class MultiValueNeedle(SyntheticTask):
    """NIAH, multi-value (Hsieh et al. 2024, RULER, Sec. 3.1, "MV-NIAH"): one key inserted ``n_values`` times
    with a different value each time; the answer is every value, in the order they appear.

    Format (version 1): ``PAD* haystack "?" kk "="``, answer ``d1d2d3d4 "\\n"`` (two digits
    each). Fixed: 4 values; the filler grows with the length.
    """

    name = "niah_multivalue"
    version = 1
    description = "retrieve all values of a key inserted several times in filler, in order"
    n_values: ClassVar[int] = 4
    needle_len: ClassVar[int] = 6  # "kk:dd "
    min_length = n_values * needle_len + 4 + 2 * n_values + 1 + 8

    def make(self, rng: random.Random, length: int) -> Example:
        (key,) = two_letter_words(rng, 1)
        values = ["".join(rng.choices(DIGITS, k=2)) for _ in range(self.n_values)]
        n_filler = length - self.n_values * self.needle_len - 4 - 2 * self.n_values - 1
        text, depths = haystack(rng, [f"{key}:{v} " for v in values], n_filler)
        return Example(f"{text}?{key}=", "".join(values) + "\n", {"depth": depths[0]})


@TASKS.register()
class MultiQueryNeedle(SyntheticTask):
    """NIAH, multi-query (Hsieh et al. 2024, RULER, Sec. 3.1, "MQ-NIAH"): ``n_needles`` needles with distinct
    keys; the query names ``n_queries`` of them and the answer is their values in query order.

    Format (version 1): ``PAD* haystack "?" k1 " " k2 "="``, answer ``ddd ddd "\\n"``...
    written ``v1v2 "\\n"`` (three digits each). Fixed: 4 needles, 2 queried.
    """

    name = "niah_multiquery"
    version = 1
    description = "retrieve the values of two keys among several key:value needles in filler"
    n_needles: ClassVar[int] = 4
    n_queries: ClassVar[int] = 2
    needle_len: ClassVar[int] = 7
    min_length = n_needles * needle_len + (1 + 3 * n_queries) + 3 * n_queries + 1 + 8

    def make(self, rng: random.Random, length: int) -> Example:
        keys = two_letter_words(rng, self.n_needles)
        values = ["".join(rng.choices(DIGITS, k=3)) for _ in keys]
        queried = rng.sample(range(self.n_needles), self.n_queries)
        query = "?" + " ".join(keys[i] for i in queried) + "="
        answer = "".join(values[i] for i in queried) + "\n"
        n_filler = length - self.n_needles * self.needle_len - len(query) - len(answer)
        text, depths = haystack(rng, [f"{k}:{v} " for k, v in zip(keys, values)], n_filler)
        return Example(text + query, answer, {"depth": depths[queried[0]]})


@TASKS.register()
class VariableTracking(SyntheticTask):
    """Variable tracking (Hsieh et al. 2024, RULER, Sec. 3.2, "VT"): a chain ``x=NN``, ``y=x``, ``z=y`` ... of
    ``hops`` assignments passes a value from variable to variable, a second chain passes
    another value, and both chains' statements are scattered through the filler (each
    chain in its own order). The query names the first value; the answer is every variable
    that holds it, in the order they were assigned.

    Format (version 1): statements ``v "=" NN " "`` or ``v "=" u " "`` (single-letter
    variables, A-Z, distinct), query ``"?" NN "="``, answer the variable letters then
    ``"\\n"``. Fixed: 2 chains of 3 variables (2 hops); the filler grows with the length.
    """

    name = "variable_tracking"
    version = 1
    description = "name every variable a value is passed to through a chain of assignments"
    n_chains: ClassVar[int] = 2
    chain_len: ClassVar[int] = 3  # variables per chain: hops + 1
    min_length = n_chains * (5 + 4 * (chain_len - 1)) + 4 + chain_len + 1 + 8

    def make(self, rng: random.Random, length: int) -> Example:
        names = rng.sample("ABCDEFGHIJKLMNOPQRSTUVWXYZ", self.n_chains * self.chain_len)
        values = [f"{n:02d}" for n in rng.sample(range(100), self.n_chains)]
        chains = []
        for c in range(self.n_chains):
            var = names[c * self.chain_len : (c + 1) * self.chain_len]
            chains.append([f"{var[0]}={values[c]} "] + [f"{var[i]}={var[i - 1]} " for i in range(1, self.chain_len)])
        # interleave the chains' statements, each chain keeping its own order
        order = [c for c in range(self.n_chains) for _ in range(self.chain_len)]
        rng.shuffle(order)
        cursor = [0] * self.n_chains
        statements = []
        for c in order:
            statements.append(chains[c][cursor[c]])
            cursor[c] += 1
        answer = "".join(names[: self.chain_len]) + "\n"
        query = f"?{values[0]}="
        n_filler = length - sum(map(len, statements)) - len(query) - len(answer)
        text, depths = haystack(rng, statements, n_filler)
        return Example(text + query, answer, {"depth": depths[statements.index(chains[0][0])]})


@TASKS.register()
class CommonWords(SyntheticTask):
    """Common-word extraction (Hsieh et al. 2024, RULER, Sec. 3.3, "CWE"): a list of two-letter words in which
    ``n_common`` words appear ``repeats`` times each and every other word once; the answer
    is the common words. As in RULER the common words' frequency is fixed and the list of
    uncommon words grows with the length, so they are an ever smaller share of it.

    Format (version 1): ``PAD* w (" " w)* " ?="``, answer the common words in alphabetical
    order, space-separated, then ``"\\n"``. Fixed: 2 common words, 4 times each.
    """

    name = "common_words"
    version = 1
    description = "name the words that repeat in a long list of words that occur once"
    n_common: ClassVar[int] = 2
    repeats: ClassVar[int] = 4
    min_length = 3 * (n_common * repeats) - 1 + 3 + 3 * n_common

    def make(self, rng: random.Random, length: int) -> Example:
        common_words = self.n_common * self.repeats
        width, n_words = word_list_layout(length, self.n_common, lambda n: n - common_words + self.n_common)
        n_rare = n_words - common_words
        words = words_of(rng, self.n_common + n_rare, width)
        common, rare = words[: self.n_common], words[self.n_common :]
        listing = common * self.repeats + rare
        rng.shuffle(listing)
        prompt = " ".join(listing) + " ?="
        answer = " ".join(sorted(common)) + "\n"
        pad = length - len(prompt) - len(answer)
        return Example(PAD * pad + prompt, answer, {"n_words": n_words})


@TASKS.register()
class FrequentWords(SyntheticTask):
    """Frequent-word extraction (Hsieh et al. 2024, RULER, Sec. 3.3, "FWE"): a list of two-letter words whose
    frequencies follow a Zipf law (p(rank r) proportional to r^-alpha, alpha = 2 as in
    RULER); the answer is the three most frequent words, most frequent first. The counts of
    the top three are made strictly decreasing and above every other word's, so the answer
    is unique: the top three take their Zipf share of the list (at least 4, 3 and 2, each
    above the next), the rest is drawn from the tail, each tail word capped one below the
    third.

    Format (version 1): ``PAD* w (" " w)* " ?="``, answer ``w1 " " w2 " " w3 "\\n"``.
    """

    name = "frequent_words"
    version = 1
    description = "name the three most frequent words of a Zipf-distributed list"
    alpha: ClassVar[float] = 2.0
    vocabulary: ClassVar[int] = 200
    min_length = 3 * (4 + 3 + 2) - 1 + 3 + 9  # nine words: counts 4, 3, 2

    def make(self, rng: random.Random, length: int) -> Example:
        width, n_words = word_list_layout(length, 3, lambda n: self.vocabulary)
        weights = [r ** -self.alpha for r in range(1, self.vocabulary + 1)]
        total = sum(weights)
        c3 = max(2, round(n_words * weights[2] / total))
        c2 = max(c3 + 1, round(n_words * weights[1] / total))
        c1 = min(n_words - c2 - c3, max(c2 + 1, round(n_words * weights[0] / total)))  # the rest is the tail
        words = words_of(rng, self.vocabulary, width)
        counts = {words[0]: c1, words[1]: c2, words[2]: c3}
        tail, tail_weights = words[3:], weights[3:]
        for _ in range(n_words - c1 - c2 - c3):
            while True:
                w = rng.choices(tail, tail_weights)[0]
                if counts.get(w, 0) < c3 - 1:
                    counts[w] = counts.get(w, 0) + 1
                    break
        listing = [w for w, c in counts.items() for _ in range(c)]
        rng.shuffle(listing)
        prompt = " ".join(listing) + " ?="
        answer = " ".join(words[:3]) + "\n"
        return Example(PAD * (length - len(prompt) - len(answer)) + prompt, answer, {"n_words": n_words})


