"""The task battery and LM extrapolation through lm-eval, offline, on a real trained model;
every stored figure checked against a direct computation with the model. And the
summaries, on hand-computed cases."""

from __future__ import annotations

import math
import statistics

import pytest
import torch
import yaml

from suite.data.corpus import load_corpus
from suite.data.synthetic import generate
from suite.encodings.simple import SinusoidalParams
from suite.evaluation.evaluators.extrapolation import evaluate_lm
from suite.evaluation.lmeval_adapter import POLICY, PosBenchLM
from suite.evaluation.lmeval_tasks import (
    evaluate_lm_rolling,
    evaluate_tasks,
    run_lm_eval,
    write_task_config,
)

from tests.plugins.bounded import BoundedSinusoidal
from tests.evaluation.test_lmeval import TRAIN_LEN, one_thread, trained, untrained  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

TASKS = ["parity", "brackets", "passkey"]
N, SEED = 24, 5


@torch.no_grad()
def greedy_correct(model, example, scale: int) -> bool:
    """Does argmax reproduce every byte of the answer, the whole example in one window?"""
    model.set_scale(scale)
    ids = torch.tensor([list(example.text.encode())])
    predicted = model(ids[:, :-1])[0, -len(example.answer) :].argmax(-1).tolist()
    model.set_scale(1)
    return predicted == list(example.answer.encode())


@pytest.fixture(scope="module")
def evaluated(trained, tmp_path_factory):  # noqa: F811
    """The battery's rows and its per-sample outputs."""
    workdir, samples = tmp_path_factory.mktemp("battery"), []
    rows = evaluate_tasks(trained.model, TRAIN_LEN, TASKS, scales=[1, 2], n=N, seed=SEED, workdir=workdir, batch_size=8,
                          samples=samples)
    return rows, samples


@pytest.fixture(scope="module")
def battery(evaluated):
    return [r.as_dict() for r in evaluated[0]]


def test_per_sample_outputs_are_each_examples_outcome_and_rescore_to_every_figure(evaluated, trained, tmp_path):  # noqa: F811
    from lm_eval.utils import hash_string

    from suite.results.samples import read_samples, rescore, write_samples

    rows, samples = evaluated
    assert len(samples) == len(TASKS) * 2 * N  # every example at every scale
    for task in TASKS:
        for scale in (1, 2):
            examples = generate(task, N, scale * TRAIN_LEN, SEED)
            mine = sorted((s for s in samples if (s.task, s.scale) == (task, scale)), key=lambda s: s.doc_id)
            assert [s.doc_id for s in mine] == list(range(N))
            for s, ex in zip(mine, examples):
                assert (s.target, s.prompt_hash) == (ex.answer, hash_string(ex.prompt))
                assert s.correct == float(greedy_correct(trained.model, ex, scale))  # the model's own outcome
                assert s.logprob <= 0 and s.output is None  # a log-likelihood template's response
            if task == "passkey":
                assert [s.breakdown_value for s in mine] == [str(ex.meta["depth"]) for ex in examples]
    stored = read_samples(write_samples(tmp_path / "s.parquet", samples))
    assert sorted(stored, key=lambda s: (s.scale, s.task, s.doc_id)) == sorted(samples, key=lambda s: (s.scale, s.task, s.doc_id))
    rescored = rescore(rows, stored)
    figures = [r for r in rows if r.status == "ok"]
    assert len(rescored) == len(figures) and any(r.stored.metric.startswith("acc_depth") for r in rescored)
    assert all(r.equal for r in rescored), [r for r in rescored if not r.equal]  # exactly, not approximately


def by_key(rows):
    return {(r["task"], r["metric"], r["scale"]): r for r in rows}


def test_accuracy_from_lm_eval_equals_a_direct_greedy_check(battery, trained):  # noqa: F811
    rows = by_key(battery)
    values = []
    for task in TASKS:
        for scale in (1, 2):
            examples = generate(task, N, scale * TRAIN_LEN, SEED)
            correct = [greedy_correct(trained.model, ex, scale) for ex in examples]
            row = rows[(task, "acc", scale)]
            assert row["value"] == pytest.approx(sum(correct) / N)
            assert row["stderr"] == pytest.approx(statistics.stdev(correct) / math.sqrt(N))
            assert (row["n"], row["eval_len"], row["status"]) == (N, scale * TRAIN_LEN, "ok")
            assert row["window_policy"] == POLICY["loglikelihood"]
            assert row["source"] == f"lm-eval 0.4.13; {task} v1; posbench_synthetic.yaml v1"
            values.append(row["value"])
            if task == "passkey":  # and per depth decile, from lm-eval's per-sample results
                for depth in range(10):
                    at_depth = [c for c, ex in zip(correct, examples) if ex.meta["depth"] == depth]
                    if not at_depth:
                        assert (task, f"acc_depth{depth}", scale) not in rows
                        continue
                    depth_row = rows[(task, f"acc_depth{depth}", scale)]
                    assert depth_row["value"] == pytest.approx(sum(at_depth) / len(at_depth))
                    assert depth_row["n"] == len(at_depth)
    assert any(0 < v < 1 for v in values)  # not a vacuous all-zero comparison
    assert len(battery) == len(rows)


def test_the_prompt_reaches_the_model_byte_for_byte_from_any_working_directory(trained, tmp_path, monkeypatch):  # noqa: F811
    workdir = tmp_path / "work"
    name = write_task_config("copy", 33, 4, 0, workdir)  # odd length: the prompt starts with a pad space
    config = yaml.safe_load((workdir / "tasks" / f"{name}.yaml").read_text())
    data = config["dataset_kwargs"]["data_files"]["test"]
    assert config["include"].startswith("/") and data.startswith("/")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # lm-eval resolves relative data files against the CWD: ours are absolute
    results = run_lm_eval(PosBenchLM(trained.model, TRAIN_LEN, eval_len=33), [name], workdir)
    sent = [tuple(s["arguments"][0]) for s in sorted(results["samples"][name], key=lambda s: s["doc_id"])]
    assert sent == [(ex.prompt, ex.answer) for ex in generate("copy", 4, 33, 0)]
    assert sent[0][0].startswith(" ") and sent[0][1].endswith("\n")


def test_generation_exact_match_equals_the_greedy_flag_accuracy(battery, trained, tmp_path):  # noqa: F811
    generated = [r.as_dict() for r in evaluate_tasks(trained.model, TRAIN_LEN, TASKS, scales=[1, 2], n=N, seed=SEED,
                                                     workdir=tmp_path, batch_size=8, template="posbench_synthetic_generate")]
    by_greedy_flag = by_key(battery)
    assert {r["metric"] for r in generated} >= {"exact_match", "exact_match_depth0"}
    for row in generated:
        twin = by_greedy_flag[(row["task"], row["metric"].replace("exact_match", "acc"), row["scale"])]
        assert row["value"] == pytest.approx(twin["value"]) and row["n"] == twin["n"]
        assert row["window_policy"] == POLICY["generate_until"]


def test_lm_bits_per_byte_through_lm_eval_equal_the_direct_evaluator(trained, tmp_path):  # noqa: F811
    test_split = load_corpus(trained.run.task.corpus)["test"]
    direct, _ = evaluate_lm(trained.model, test_split, TRAIN_LEN, [1, 2, 4], tokens=2048, batch_size=4, curve_buckets=4)
    rolled = evaluate_lm_rolling(trained.model, TRAIN_LEN, test_split, [1, 2, 4], tokens=2048, workdir=tmp_path / "a",
                                 batch_size=4)
    direct, rolled = [d.as_dict() for d in direct], [r.as_dict() for r in rolled]
    assert [r["scale"] for r in rolled] == [1, 2, 4]
    for d, r in zip(direct, rolled):
        assert r["value"] == pytest.approx(d["value"], rel=1e-4)
        assert (r["metric"], d["metric"]) == ("bpb_lmeval", "bpb")
        assert (r["eval_len"], r["n"], r["status"]) == (d["eval_len"], d["n"], "ok")
        assert r["window_policy"] == POLICY["loglikelihood_rolling"] and r["source"].startswith("lm-eval 0.4.13")

    # any bytes at all, from a file: not UTF-8, cut mid-character, NUL bytes
    noise = torch.randint(0, 256, (700,), generator=torch.Generator().manual_seed(0))
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(noise.tolist()))
    direct, _ = evaluate_lm(trained.model, noise, TRAIN_LEN, [1, 2], tokens=600, batch_size=4, curve_buckets=2)
    rolled = evaluate_lm_rolling(trained.model, TRAIN_LEN, path, [1, 2], tokens=600, workdir=tmp_path / "b", batch_size=3)
    assert [r.value for r in rolled] == pytest.approx([d.value for d in direct], rel=1e-4)
    whole_windows = [600 // (s * TRAIN_LEN) * s * TRAIN_LEN for s in (1, 2)]  # each scale: whole windows in the budget
    assert [d.n for d in direct] == [r.n for r in rolled] == whole_windows


def test_lengths_the_encoding_cannot_represent_are_recorded_not_applicable(tmp_path):
    model = untrained(BoundedSinusoidal, SinusoidalParams(), train_len=16)
    rows = evaluate_tasks(model, 16, ["parity"], scales=[1, 2, 4], n=4, seed=0, workdir=tmp_path, batch_size=4)
    assert [(r.scale, r.status) for r in rows] == [(1, "ok"), (2, "not_applicable"), (4, "not_applicable")]
    assert rows[1].value is None and rows[1].n == 0 and rows[1].eval_len == 32
    with pytest.raises(ValueError, match="passkey needs length >= 48"):  # refused before anything runs
        evaluate_tasks(model, 16, ["parity", "passkey"], scales=[2], n=4, seed=0, workdir=tmp_path, batch_size=4)
    tokens = torch.arange(200) % 256
    rows = evaluate_lm_rolling(model, 16, tokens, [1, 2], tokens=128, workdir=tmp_path, batch_size=4)
    assert [(r.scale, r.status, r.value is None) for r in rows] == [(1, "ok", False), (2, "not_applicable", True)]


# -- summaries, on hand-computed cases ---------------------------------------------------------
