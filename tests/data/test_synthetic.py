"""Synthetic tasks: exact lengths, determinism, and answers checked by independent solvers.

Each solver below parses the prompt text with its own regex and solves the task from
scratch; it shares no code with ``suite.data.synthetic``, so a generator that builds
a wrong answer or drifts from its documented format fails here.
"""

from __future__ import annotations

import collections
import decimal
import hashlib
import os
import random
import re
import string
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.data.synthetic import TASKS, Example, generate, get_task

from tests.data.test_ruler_tasks import SOLVERS as RULER_SOLVERS

LENGTHS = [0, 1, 2, 3, 50, 64, 100, 255, 256, 1023, 1024, 4096, 16384]
PASSKEY_QUESTION = " Pass key:"
PASSKEY_FILLER = (
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
)


def _match(pattern: str, prompt: str) -> re.Match:
    m = re.fullmatch(pattern, prompt)
    assert m, f"prompt does not match {pattern!r}: {prompt[:120]!r}"
    return m


def solve_copy(prompt: str, length: int) -> str:
    return _match(r" ?([a-z]+)=", prompt).group(1) + "\n"


def solve_reverse(prompt: str, length: int) -> str:
    return _match(r" ?([a-z]+)=", prompt).group(1)[::-1] + "\n"


def solve_assoc_recall(prompt: str, length: int) -> str:
    m = _match(r" *((?:[a-z]+:\d )+)\? ((?:[a-z]+ )*[a-z]+)=", prompt)
    pairs = [p.split(":") for p in m.group(1).split()]
    table = dict(pairs)
    queries = m.group(2).split()
    assert len(table) == len(pairs), "keys must be unique"
    assert len(queries) == len(set(queries)) == 4
    return "".join(table[q] for q in queries) + "\n"


def solve_mqar(prompt: str, length: int) -> str:
    m = _match(r" ?((?:[a-zA-Z]\d)+)\?((?:[a-zA-Z]\d)*)([a-zA-Z])", prompt)
    pairs = re.findall(r"([a-zA-Z])(\d)", m.group(1))
    table = dict(pairs)
    assert len(table) == len(pairs) <= 52, "keys must be unique"
    for key, value in re.findall(r"([a-zA-Z])(\d)", m.group(2)):  # every earlier query shows its key's value
        assert table[key] == value
    return table[m.group(3)] + "\n"


def solve_recall(prompt: str, length: int) -> str:
    m = _match(r" *((?:[a-z]+:\d )+)\? ([a-z]+)=", prompt)
    table = dict(p.split(":") for p in m.group(1).split())
    return table[m.group(2)] + "\n"


def solve_selective_copy(prompt: str, length: int) -> str:
    return _match(r"([a-z.]+)=", prompt).group(1).replace(".", "") + "\n"


def solve_counting(prompt: str, length: int) -> str:
    m = _match(r"([a-h]+) ([a-h])=", prompt)
    return str(m.group(1).count(m.group(2))).zfill(len(str(length))) + "\n"


def solve_flip_flop(prompt: str, length: int) -> str:
    body = _match(r" ?((?:[wir][01])+)r", prompt).group(1)
    assert body[0] == "w", "the sequence starts with a write"
    memory = None
    for op, bit in zip(body[::2], body[1::2]):
        if op == "w":
            memory = bit
        elif op == "r":
            assert bit == memory, "an intermediate read must show the last written bit"
    return memory + "\n"


def passkey_position(prompt: str) -> tuple[str, int, int]:
    """The key, the needle's offset and the number of filler characters."""
    assert prompt.endswith(PASSKEY_QUESTION)
    (m,) = re.finditer(r"The pass key is (\d{5})\. ", prompt)
    assert re.findall(r"\d+", prompt) == [m.group(1)], "exactly one number in the prompt"
    filler = prompt[: m.start()] + prompt[m.end() : -len(PASSKEY_QUESTION)]
    assert (PASSKEY_FILLER * (len(filler) // len(PASSKEY_FILLER) + 1)).startswith(filler)
    return m.group(1), m.start(), len(filler)


def solve_passkey(prompt: str, length: int) -> str:
    return passkey_position(prompt)[0] + "\n"


def solve_addition(prompt: str, length: int) -> str:
    m = _match(r" *(\d+)\+(\d+)=", prompt)
    a, b = m.groups()
    assert len(a) == len(b)
    with decimal.localcontext() as ctx:
        ctx.prec = len(a) + 2  # exact: Decimal arithmetic has no 4300-digit limit
        total = decimal.Decimal(a) + decimal.Decimal(b)
    return str(total).zfill(len(a) + 1) + "\n"


def solve_parity(prompt: str, length: int) -> str:
    return str(_match(r"([01]+)=", prompt).group(1).count("1") % 2) + "\n"


def solve_brackets(prompt: str, length: int) -> str:
    s = _match(r" ?([()\[\]]+)=", prompt).group(1)
    stack: list[str] = []
    for c in s:
        if c in "([":
            stack.append(c)
        elif not stack or stack.pop() + c not in ("()", "[]"):
            return "N\n"
    return ("N" if stack else "Y") + "\n"


SOLVERS = {
    "copy": solve_copy,
    "reverse": solve_reverse,
    "assoc_recall": solve_assoc_recall,
    "recall": solve_recall,
    "mqar": solve_mqar,
    "selective_copy": solve_selective_copy,
    "counting": solve_counting,
    "flip_flop": solve_flip_flop,
    "passkey": solve_passkey,
    "addition": solve_addition,
    "parity": solve_parity,
    "brackets": solve_brackets,
    # the RULER-style battery: its solvers read the prompt alone (tests/data/test_ruler_tasks.py)
    **{name: (lambda solve: lambda prompt, length: solve(prompt))(solve) for name, solve in RULER_SOLVERS.items()},
}
SHORT_ANSWER = {"assoc_recall", "recall", "mqar", "counting", "flip_flop", "passkey", "parity", "brackets"}

# sha256 of generate(name, 8, 64, seed=0), keyed by (name, version). A changed
# fingerprint under the same version means the format or sampling changed: bump the
# task's version (it is part of the seed) and record the new fingerprint here.
GOLDEN = {
    ("copy", 1): "458729dfa25ab99d7f82d607968055a90f512b04601a7b1037c02c588c188d20",
    ("reverse", 1): "e5ee0737fb23c674fd5498118cb9a1c12c9fbd23507d192bcd64d617508d14e4",
    ("assoc_recall", 1): "19f431e5ad63a93846dc8ed9aac43b042a202e39c6f603be9297cb20a47bb62f",
    ("mqar", 2): "73fe947e3e12ac8e742e8059ce47016a0dac56db1074962ae1b980d6978875b3",
    ("recall", 1): "f630c030d8f3a6d6d4ce2769dcfddc899febb8d0fbe4b6bfa560ded65391176b",
    ("selective_copy", 1): "924b40032b59b50c4de923d263fa1fa73bf2534dc9f633dfb5817d1c39071a04",
    ("counting", 1): "966a123366d1a7068db28d03572cb858699f5c85930896156773a4bd7a634ed8",
    ("flip_flop", 1): "991ce6e6b77a5006d942087c94ece1b86658aa691e315881d363d36f689b543e",
    ("passkey", 1): "87cb4681584d928d6dd5823c47665a055c89bccc2bce8c806115538d758e3c84",
    ("addition", 1): "9718168371a487459b856d5da68aedb286a771fff3acf4b870bd3d4f324231c1",
    ("parity", 1): "9f48d2a118201774f13895917e0e7bf4f2350ed72b6db2fa0ad76dc096e8b038",
    ("brackets", 1): "d15f2f301d20064568af092025733354482c8831a6cbb7b0524b6721ac05e5ae",
    ("niah_multikey", 1): "ba4047288e5b0621e41afcf9f0acc9766c6ab7051525e9d83add8e5baaab3038",
    ("niah_multivalue", 1): "b6827d63434d3c4e93a6f6809e4db7d666c7b85678e98b5dd87b23440986370a",
    ("niah_multiquery", 1): "34dc4fd79ebf7c70cc4720422eb5571dd62c542e31eaf73ca43ad48a10ad7b67",
    ("variable_tracking", 1): "636707c5aab3ced04508d514c2ddc703a47a5182f1f9812c12ffcceb29dd1840",
    ("common_words", 1): "198f0b542be3d484684c3b6503ee534736515b65043993f509ce4aa4443563ee",
    ("frequent_words", 1): "a5ef39fa4f9a14697c8dc26f241f67fe771c24d5ec383ac6273e831a2e16eace",
}


def fingerprint(examples: list[Example]) -> str:
    rows = [(e.prompt, e.answer, dict(e.meta)) for e in examples]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def check_example(name: str, ex: Example, length: int) -> None:
    text = ex.prompt + ex.answer
    assert text.isascii()
    assert len(text.encode()) == length
    assert ex.answer.endswith("\n") and ex.answer.count("\n") == 1
    assert "\n" not in ex.prompt
    assert ex.prompt[-1] in (string.ascii_letters if name == "mqar" else "=:r")  # MQAR ends on the queried key, as Zoology's
    assert len(ex.prompt) - len(ex.prompt.lstrip(" ")) <= 5, "pad is less than one unit"
    assert SOLVERS[name](ex.prompt, length) == ex.answer


def test_every_task_has_a_solver_and_documents_its_format():
    assert set(TASKS) == set(SOLVERS)
    for name, cls in TASKS.items():
        assert cls.name == name
        assert isinstance(cls.version, int) and cls.version >= 1
        assert cls.description and cls.min_length >= 1
        doc = cls.__doc__ or ""
        assert f"Format (version {cls.version})" in doc, name
        assert re.search(r"et al\. 20\d\d|& \w+ 20\d\d", doc), f"{name} cites no paper"


@pytest.mark.parametrize("name", sorted(TASKS))
@pytest.mark.parametrize("offset", LENGTHS)
def test_examples_have_exact_length_and_solvable_answers(name, offset):
    min_length = TASKS[name].min_length
    length = min_length + offset if offset < 4 else offset
    if length < min_length:
        pytest.skip(f"{length} < min_length")
    examples = generate(name, 20, length, seed=0)
    assert len(examples) == 20
    for ex in examples:
        check_example(name, ex, length)
    # Length never leaks the answer: one layout per length.
    assert len({len(ex.answer) for ex in examples}) == 1
    if name in SHORT_ANSWER:
        assert len(examples[0].answer) <= 8
    if name in ("copy", "reverse"):
        assert len(examples[0].answer) >= length // 2 - 1


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(TASKS)),
    extra=st.integers(0, 2048),
    seed=st.integers(0, 2**32),
)
def test_any_length_at_least_min_length(name, extra, seed):
    length = TASKS[name].min_length + extra
    (ex,) = generate(name, 1, length, seed)
    check_example(name, ex, length)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_below_min_length_is_an_error(name):
    with pytest.raises(ValueError, match="needs length >="):
        generate(name, 1, TASKS[name].min_length - 1, seed=0)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_deterministic_and_seed_dependent(name):
    random.seed(1)
    a = generate(name, 50, 64, seed=3)
    random.seed(2)
    random.random()
    b = generate(name, 50, 64, seed=3)
    assert a == b, "independent of the global random state"
    assert generate(name, 10, 64, seed=3) == a[:10], "a shorter list is a prefix"
    texts = [e.text for e in a]
    assert len(set(texts)) >= 45, "examples within a list differ"
    other = [e.text for e in generate(name, 50, 64, seed=4)]
    assert sum(x != y for x, y in zip(texts, other)) >= 45, "seeds give different examples"


@pytest.mark.parametrize("name", sorted(TASKS))
def test_golden_fingerprint(name):
    key = (name, TASKS[name].version)
    assert key in GOLDEN, f"new version {key}: record its fingerprint in GOLDEN"
    got = fingerprint(generate(name, 8, 64, seed=0))
    assert got == GOLDEN[key], f"{name} output changed under version {key[1]}: bump the version"


def test_same_output_in_another_process_with_another_hash_seed():
    code = (
        "from suite.data.synthetic import TASKS, generate\n"
        "from tests.data.test_synthetic import fingerprint\n"
        "print([fingerprint(generate(n, 5, 80, 7)) for n in sorted(TASKS)])"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = set()
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outs.add(run.stdout.strip())
    assert outs == {str([fingerprint(generate(n, 5, 80, 7)) for n in sorted(TASKS)])}


@pytest.mark.parametrize("length", [48, 64, 1024, 16384])
def test_passkey_depth_is_uniform_over_deciles_and_spans_the_prompt(length):
    examples = generate("passkey", 500, length, seed=0)
    counts = collections.Counter()
    fractions = []
    for ex in examples:
        _, offset, n_filler = passkey_position(ex.prompt)
        decile = 10 * offset // (n_filler + 1)
        assert ex.meta["depth"] == decile
        counts[decile] += 1
        fractions.append(offset / n_filler)
    assert sorted(counts) == list(range(10))
    assert min(counts.values()) >= 30, counts  # 50 expected per decile
    assert min(fractions) < 0.02 and max(fractions) > 0.98


@pytest.mark.parametrize("name", ["flip_flop", "parity", "brackets"])
@pytest.mark.parametrize("length", [64, 1024])
def test_binary_answers_are_balanced(name, length):
    answers = collections.Counter(e.answer for e in generate(name, 1000, length, seed=0))
    assert len(answers) == 2
    assert all(440 <= c <= 560 for c in answers.values()), answers


@pytest.mark.parametrize("length", [5, 64, 1024])
def test_bracket_counts_never_decide_the_label(length):
    for ex in generate("brackets", 300, length, seed=0):
        s = ex.prompt.strip(" =")
        assert s.count("(") == s.count(")") and s.count("[") == s.count("]"), ex


def test_counting_answers_vary_and_grow_with_length():
    short = [int(e.answer) for e in generate("counting", 200, 64, seed=0)]
    long = [int(e.answer) for e in generate("counting", 200, 1024, seed=0)]
    assert len(set(short)) >= 5 and len(set(long)) >= 15
    assert sum(long) / len(long) > 8 * sum(short) / len(short)


def test_assoc_recall_and_selective_copy_scale_with_length():
    assert generate("assoc_recall", 1, 1024, 0)[0].meta["n_pairs"] == (1024 - 23) // 6
    (big,) = generate("assoc_recall", 1, 120_000, 0)  # past 26**3 pairs: keys widen to 4
    assert solve_assoc_recall(big.prompt, 120_000) == big.answer
    assert re.match(r" *[a-z]{4}:", big.prompt)
    marked = [generate("selective_copy", 1, n, 0)[0].meta["n_marked"] for n in (64, 1024)]
    assert marked == [62 // 9, 1022 // 9]


@pytest.mark.parametrize("length", [9, 21, 33, 64, 417, 2048])
def test_mqar_supervises_every_earlier_query_value_and_nothing_else(length):
    """The supervised offsets are exactly the digits after the "?" in the prompt (each earlier
    query's value), and the training targets are those bytes and the answer's; the pairs stop
    at 52 and queries fill the rest."""
    from suite.data.synthetic_train import IGNORE, example_tensors

    for ex in generate("mqar", 20, length, seed=1):
        queries = ex.prompt[ex.prompt.index("?"):]
        offsets = tuple(ex.prompt.index("?") + i for i, c in enumerate(queries) if c.isdigit())
        assert ex.supervised == offsets
        x, y = example_tensors(ex.prompt, ex.answer, ex.supervised)
        targeted = [t + 1 for t in range(len(y)) if y[t] != IGNORE]
        assert targeted == [*offsets, len(ex.prompt), len(ex.prompt) + 1]
        assert all(chr(int(x[o])) .isdigit() for o in offsets)
    assert generate("mqar", 1, 2048, 0)[0].meta["n_pairs"] == 52


def test_addition_beyond_python_int_string_limit():
    (ex,) = generate("addition", 1, 3 * 6000 + 4, seed=0)
    assert len(ex.answer) == 6002
    assert solve_addition(ex.prompt, 3 * 6000 + 4) == ex.answer


def test_unknown_task_suggests_the_nearest_name():
    with pytest.raises(ValueError, match="did you mean 'passkey'"):
        get_task("passky")
    with pytest.raises(ValueError, match="did you mean 'reverse'"):
        generate("revers", 1, 64, seed=0)
    with pytest.raises(ValueError, match="unknown synthetic task 'zzz'"):
        get_task("zzz")
