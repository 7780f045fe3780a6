"""The RULER-style battery: every generator exact in length and deterministic per seed,
and each answer reproduced by an independent solver that reads only the prompt's text
(regular expressions and counting, no use of the generator's internals)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from suite.data.ruler_tasks import FILLER
from suite.data.synthetic import TASKS, generate

NAMES = [name for name, task in TASKS.items() if task.__module__ == "suite.data.ruler_tasks"]
LENGTHS = [64, 65, 97, 128, 256, 1024, 4096]


def solve_needle(prompt: str) -> str:
    """Values of the queried keys, in query order: each key's needles ``kk:ddd``."""
    haystack, query = prompt.rsplit("?", 1)
    needles = re.findall(r"(?<![a-z])([a-z]{2}):(\d+) ", haystack)
    keys = query.rstrip("=").split(" ")
    return "".join(v for k in keys for kk, v in needles if kk == k) + "\n"


def solve_variables(prompt: str) -> str:
    """Follow the assignments from the queried value: every variable that ends up holding it."""
    haystack, query = prompt.rsplit("?", 1)
    value = query.rstrip("=")
    holds = {}
    order = []
    for var, src in re.findall(r"([A-Z])=([A-Z]|\d\d) ", haystack):
        holds[var] = holds.get(src, src)  # a variable holds a number, or what another holds
        order.append(var)
    return "".join(v for v in order if holds[v] == value) + "\n"


def solve_common(prompt: str) -> str:
    counts = Counter(prompt.rsplit("?", 1)[0].split())
    repeated = [w for w, c in counts.items() if c > 1]
    return " ".join(sorted(repeated)) + "\n"


def solve_frequent(prompt: str) -> str:
    counts = Counter(prompt.rsplit("?", 1)[0].split()).most_common()
    assert counts[0][1] > counts[1][1] > counts[2][1] > (counts[3][1] if len(counts) > 3 else 0)  # unique
    return " ".join(w for w, _ in counts[:3]) + "\n"


SOLVERS = {"niah_multikey": solve_needle, "niah_multivalue": solve_needle, "niah_multiquery": solve_needle,
           "variable_tracking": solve_variables, "common_words": solve_common, "frequent_words": solve_frequent}


def test_every_generator_is_registered_and_solved():
    assert set(NAMES) <= set(TASKS) and set(SOLVERS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("length", LENGTHS)
def test_exact_length_and_solved_independently(name, length):
    for ex in generate(name, 25, length, seed=length):
        assert len(ex.text) == length and ex.answer.endswith("\n")
        assert SOLVERS[name](ex.prompt) == ex.answer, ex


@pytest.mark.parametrize("name", NAMES)
def test_every_length_from_the_smallest(name):
    task = TASKS[name]()
    rng = random.Random(0)
    for length in range(task.min_length, task.min_length + 60):
        ex = task.example(rng, length)
        assert len(ex.text) == length and SOLVERS[name](ex.prompt) == ex.answer
    with pytest.raises(ValueError, match="needs length"):
        task.example(rng, task.min_length - 1)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_per_seed(name):
    assert generate(name, 8, 200, seed=3) == generate(name, 8, 200, seed=3)
    assert generate(name, 8, 200, seed=3) != generate(name, 8, 200, seed=4)


def test_the_haystack_grows_and_the_needles_do_not():
    """As in RULER: at 16x the same four needles sit in sixteen times the filler."""
    short, long = (generate("niah_multikey", 1, n, seed=1)[0].prompt for n in (64, 1024))
    for prompt in (short, long):
        assert len(re.findall(r"[a-z]{2}:\d{3} ", prompt)) == 4
    assert FILLER.split()[0] in long and long.count(" ") > 10 * short.count(" ")


def test_needles_sit_at_every_depth():
    depths = Counter(ex.meta["depth"] for ex in generate("niah_multikey", 400, 1024, seed=0))
    assert set(depths) == set(range(10))


def test_common_words_are_a_shrinking_share_and_frequent_words_follow_zipf():
    for length, share in ((64, 0.3), (1024, 0.05)):
        listing = generate("common_words", 1, length, seed=2)[0].prompt.rsplit("?", 1)[0].split()
        common = [w for w, c in Counter(listing).items() if c == 4]
        assert len(common) == 2 and (8 / len(listing) > share if length == 64 else 8 / len(listing) < share)
    counts = sorted(Counter(generate("frequent_words", 1, 4096, seed=5)[0].prompt.rsplit("?", 1)[0].split()).values(),
                    reverse=True)
    assert counts[0] / counts[1] == pytest.approx(4.0, rel=0.25)  # Zipf, alpha 2: p1 / p2 = 2^2
    assert counts[1] / counts[2] == pytest.approx(2.25, rel=0.25)  # p2 / p3 = (3/2)^2
