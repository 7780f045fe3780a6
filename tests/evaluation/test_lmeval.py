"""The lm-eval adapter on real models: numbers against direct computations, no mocks.

Oracles score one byte at a time from its own prefix (causality makes that equal to
one forward pass over the window, so the oracle checks which positions the adapter
reads, not just that it repeats itself).
"""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import lm_eval
import pytest
import torch
import torch.nn.functional as F
import yaml
from lm_eval.api.instance import Instance
from lm_eval.api.registry import get_model
from lm_eval.tasks import TaskManager

from suite.data.synthetic import generate
from suite.encodings.base import NoParams
from suite.encodings.rotary import DynamicRotary, Rotary, RotaryParams
from suite.encodings.simple import ALiBi, SinusoidalParams
from suite.plan.grid import expand
from suite.evaluation.lmeval_adapter import PosBenchLM, decode, encode
from suite.modeling.model import ModelConfig, Transformer
from suite.specs import Project, load_grid
from suite.training.fit import fit

from tests.conftest import REPO
from tests.plugins.bounded import BoundedSinusoidal

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

TRAIN_LEN = 64


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models gain nothing from intra-op threads, and on a shared 2-core machine a
    descheduled worker thread stalls every small op (5x slower here); restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A real tiny ALiBi model fit with Lightning on parity and brackets examples of
    exactly its training length (a folder corpus), enough steps that greedy answers
    are right for some examples and wrong for others."""
    root = tmp_path_factory.mktemp("lmeval")
    corpus = root / "corpus"
    corpus.mkdir()
    for i in range(40):  # these 40 names split 36 train / 1 validation / 3 test
        examples = generate("parity", 25, TRAIN_LEN, 1000 + i) + generate("brackets", 25, TRAIN_LEN, 1000 + i)
        (corpus / f"{i:02d}.txt").write_text("".join(ex.text for ex in examples[::2] + examples[1::2]))
    for folder, name in (("encodings", "alibi"), ("sizes", "tiny")):
        (root / folder).mkdir()
        shutil.copy(REPO / folder / f"{name}.yaml", root / folder)
    (root / "tasks").mkdir()
    (root / "grids").mkdir()
    (root / "tasks" / "answers.yaml").write_text(yaml.safe_dump(
        {"name": "answers", "kind": "lm", "corpus": {"kind": "folder", "path": str(corpus), "glob": "*.txt"}}))
    (root / "grids" / "answers.yaml").write_text(yaml.safe_dump({
        "name": "answers", "encodings": ["alibi"], "sizes": ["tiny"], "tasks": ["answers"], "seeds": [0],
        "scales": [1, 2], "train": {"steps": 200, "batch_size": 8, "seq_len": TRAIN_LEN, "lr": 0.01, "warmup_steps": 10},
        "eval": {"tokens": 1024, "batch_size": 4, "curve_buckets": 4}}))
    run = expand(load_grid(root / "grids" / "answers.yaml", Project(root))).runs[0]
    result = fit(run, root / "checkpoints", progress_bar=False)
    return SimpleNamespace(model=result.module.model.eval(), checkpoint=result.checkpoint, run=run, root=root)


def untrained(encoding, params, train_len: int = 16) -> Transformer:
    torch.manual_seed(0)
    cfg = ModelConfig(train_len=train_len)
    return Transformer(cfg, lambda dims: encoding(params, dims)).eval()


def requests(kind: str, args: list[tuple]) -> list[Instance]:
    return [Instance(request_type=kind, doc={}, arguments=a, idx=0) for a in args]


@torch.no_grad()
def oracle_loglikelihood(model, context: str, continuation: str, eval_len: int) -> tuple[float, bool]:
    """Each continuation byte scored from its own prefix inside the last eval_len inputs."""
    full = list((context + continuation).encode())
    start = max(0, len(full) - 1 - eval_len)  # the first byte the window keeps
    total, greedy = 0.0, True
    for j in range(len(full) - len(continuation.encode()), len(full)):
        if j == 0:
            continue  # the first byte has no context: not scored
        logp = F.log_softmax(model(torch.tensor([full[start:j]]))[0, -1], dim=-1)
        total += logp[full[j]].item()
        greedy &= int(logp.argmax()) == full[j]
    return total, greedy


def test_loglikelihood_equals_per_byte_scoring_and_batching_changes_nothing(trained):
    model, E = trained.model, TRAIN_LEN
    examples = generate("parity", 6, E, 7) + generate("brackets", 6, E - 9, 7)
    args = [(ex.prompt, ex.answer) for ex in examples]
    args += [("x" * 100, "abc"), ("", "hello"), ("", "h"), ("ab", "")]  # truncated, no context, nothing scored
    lm = PosBenchLM(model, E, eval_len=E, batch_size=1)
    one = lm.loglikelihood(requests("loglikelihood", args))
    many = PosBenchLM(model, E, eval_len=E, batch_size=5).loglikelihood(requests("loglikelihood", args))
    for (ctx, cont), a, b in zip(args, one, many):
        ll, greedy = oracle_loglikelihood(model, ctx, cont, E)
        assert a[0] == pytest.approx(ll, rel=1e-5, abs=1e-5) and a[1] == greedy
        assert b[0] == pytest.approx(a[0], rel=1e-6, abs=1e-6) and b[1] == a[1]
    greedy_flags = [g for _, g in one[:12]]
    assert any(greedy_flags) and not all(greedy_flags)  # the check has both outcomes to get right
    assert one[-1] == (0.0, True) and one[-2] == (0.0, True)


def test_a_continuation_longer_than_the_eval_length_is_an_error():
    lm = PosBenchLM(untrained(ALiBi, NoParams()), 16)
    with pytest.raises(ValueError, match="does not fit"):
        lm.loglikelihood(requests("loglikelihood", [("a", "b" * 17)]))


def test_eval_scale_is_applied_during_calls_and_reset_after():
    model = untrained(Rotary, RotaryParams(scaling="pi"), train_len=16)
    with torch.no_grad():  # sharpen attention so positions visibly matter in an untrained model
        for block in model.blocks:
            block.attn.qkv.weight.mul_(10)
    text = decode(range(40, 100))
    args = [(text[:20], text[20:30])]
    at_2x = PosBenchLM(model, 16, eval_len=32).loglikelihood(requests("loglikelihood", args))[0][0]
    assert model.encodings[0].scale == 1.0
    model.set_scale(2)
    direct = oracle_loglikelihood(model, *args[0], 32)[0]
    model.set_scale(1)
    at_1x_len_32 = oracle_loglikelihood(model, *args[0], 32)[0]
    assert at_2x == pytest.approx(direct, rel=1e-5)
    assert abs(at_2x - at_1x_len_32) > 1e-4  # interpolation changed the numbers (float noise is ~1e-6)


def test_batching_is_exact_for_an_encoding_whose_angles_depend_on_the_length():
    model = untrained(DynamicRotary, RotaryParams(scaling="dynamic_ntk"), train_len=8)
    text = decode(range(33, 120))
    args = [(text[: 5 + 3 * i], text[40 : 44 + i]) for i in range(8)]
    one = PosBenchLM(model, 8, eval_len=32, batch_size=1).loglikelihood(requests("loglikelihood", args))
    many = PosBenchLM(model, 8, eval_len=32, batch_size=8).loglikelihood(requests("loglikelihood", args))
    model.set_scale(4)  # what the adapter sets for 32 = 4 x 8
    for a, b, (ctx, cont) in zip(one, many, args):
        assert b[0] == pytest.approx(a[0], rel=1e-6) and a[1] == b[1]
        full = torch.tensor([list((ctx + cont).encode())])  # one forward over its window, alone
        with torch.no_grad():
            logp = F.log_softmax(model(full[:, :-1][:, -32:]), dim=-1)[0, -len(cont) :]
        assert a[0] == pytest.approx(logp.gather(-1, full[0, -len(cont) :, None]).sum().item(), rel=1e-5)
    model.set_scale(1)


def test_rolling_windows_score_every_byte_after_the_first_once(trained):
    model, E = trained.model, 16
    data = bytes(range(256)) + "héllo wörld, ünïcode".encode() + b"\xff\xfe"  # not valid UTF-8 anywhere near the end
    text = data.decode("utf-8", "surrogateescape")
    assert encode(text) == list(data)
    total = PosBenchLM(model, TRAIN_LEN, eval_len=E, batch_size=3).loglikelihood_rolling(
        requests("loglikelihood_rolling", [(text,), ("a",)]))
    expected = 0.0
    with torch.no_grad():
        for start in range(0, len(data) - 1, E):  # non-overlapping windows; the last one shorter
            window = torch.tensor([list(data[start : start + E + 1])])
            logp = F.log_softmax(model(window[:, :-1]), dim=-1)
            expected += logp.gather(-1, window[:, 1:, None]).sum().item()
    assert total[0] == pytest.approx(expected, rel=1e-6)
    assert total[1] == 0.0  # one byte: nothing before it, nothing scored


@torch.no_grad()
def oracle_greedy(model, context: str, n: int, eval_len: int) -> str:
    ids = list(context.encode())
    for _ in range(n):
        ids.append(int(model(torch.tensor([ids[-eval_len:]]))[0, -1].argmax()))
    return decode(ids[len(context.encode()) :])


def test_generate_until_is_greedy_and_stops_at_the_first_stop_sequence():
    model = untrained(ALiBi, NoParams(), train_len=16)
    contexts = ["the quick brown fox", "jumps over", "x" * 40]  # the last is longer than the eval length
    lm = PosBenchLM(model, 16, eval_len=16, batch_size=2)
    free = lm.generate_until(requests("generate_until", [(c, {"until": [], "max_gen_toks": 12}) for c in contexts]))
    assert free == [oracle_greedy(model, c, 12, 16) for c in contexts]
    assert all(len(encode(g)) == 12 for g in free)
    stops = [g[3:5] for g in free]
    cut = lm.generate_until(requests("generate_until", [(c, {"until": ["\x00never", s], "max_gen_toks": 12})
                                                        for c, s in zip(contexts, stops)]))
    assert cut == [g[: g.find(s)] for g, s in zip(free, stops)]
    with pytest.raises(ValueError, match="greedily"):
        lm.generate_until(requests("generate_until", [("a", {"do_sample": True})]))


def test_an_eval_length_the_encoding_cannot_represent_is_refused():
    model = untrained(BoundedSinusoidal, SinusoidalParams(), train_len=16)
    assert PosBenchLM(model, 16, eval_len=16).policy["scale"] == 1
    with pytest.raises(ValueError, match="beyond"):
        PosBenchLM(model, 16, eval_len=32)


def test_the_registered_model_loads_a_checkpoint_from_an_arg_string(trained):
    assert get_model("posbench") is PosBenchLM
    lm = PosBenchLM.create_from_arg_string(f"checkpoint={trained.checkpoint},eval_len=128",
                                           {"batch_size": 4, "device": "cpu"})
    assert lm.policy["eval_len"] == 128 and lm.policy["train_len"] == TRAIN_LEN and lm.policy["scale"] == 2
    args = [("0110=", "0\n"), ("()[]=", "Y\n")]
    in_process = PosBenchLM(trained.model, TRAIN_LEN, eval_len=128).loglikelihood(requests("loglikelihood", args))
    from_checkpoint = lm.loglikelihood(requests("loglikelihood", args))
    assert [ll for ll, _ in from_checkpoint] == pytest.approx([ll for ll, _ in in_process], rel=1e-6)
    assert [g for _, g in from_checkpoint] == [g for _, g in in_process]


def test_simple_evaluate_builds_the_model_by_name(trained, tmp_path):
    """`lm_eval --model posbench --model_args checkpoint=...` as a library call."""
    examples = generate("parity", 8, TRAIN_LEN, 3)
    data = tmp_path / "parity.jsonl"
    data.write_text("".join(json.dumps({"prompt": ex.prompt, "answer": ex.answer}) + "\n" for ex in examples))
    config = {"include": str(REPO / "tasks" / "lmeval" / "posbench_synthetic.yaml"), "task": "parity_by_name",
              "dataset_kwargs": {"data_files": {"test": str(data)}, "cache_dir": str(tmp_path / "cache")}}
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "parity_by_name.yaml").write_text(yaml.safe_dump(config))
    manager = TaskManager(include_path=str(tmp_path / "tasks"), include_defaults=False)
    results = lm_eval.simple_evaluate(model="posbench", model_args=f"checkpoint={trained.checkpoint}",
                                      tasks=["parity_by_name"], task_manager=manager, batch_size=4)
    in_process = PosBenchLM(trained.model, TRAIN_LEN).loglikelihood(
        requests("loglikelihood", [(ex.prompt, ex.answer) for ex in examples]))
    assert results["results"]["parity_by_name"]["acc,none"] == pytest.approx(sum(g for _, g in in_process) / 8)
    assert results["config"]["posbench_policy"]["eval_len"] == TRAIN_LEN
