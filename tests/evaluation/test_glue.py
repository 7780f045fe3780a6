"""The GLUE-style fine-tuning protocol: real fine-tunes of a tiny backbone."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.evaluation.glue import SequenceHead, encode_batch, evaluate_glue
from suite.data.glue_tasks import TASKS as OFFLINE
from suite.modeling.model import ModelConfig, Transformer
from suite.specs import GlueRecipe

from tests.data.test_glue_data import write_glue_dir

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=32)


def backbone(impl="rotary") -> Transformer:
    torch.manual_seed(0)
    cls = ENCODINGS.get(impl)
    return Transformer(CFG, lambda dims: cls(cls.Params(), dims))


def test_right_padding_cannot_change_the_last_real_position():
    module = SequenceHead(backbone(), num_labels=3, regression=False, recipe=GlueRecipe()).eval()
    texts = ["short", "a much longer input text"]
    ids, lengths = encode_batch(texts, max_len=128)
    assert ids.shape == (2, len(texts[1])) and lengths.tolist() == [5, len(texts[1])]
    together = module(ids, lengths)
    alone = torch.cat([module(*encode_batch([t], 128)) for t in texts])
    torch.testing.assert_close(together, alone, rtol=1e-5, atol=1e-6)


def test_inputs_are_cut_to_their_last_bytes():
    ids, lengths = encode_batch(["abcdef"], max_len=4)
    assert bytes(ids[0].tolist()) == b"cdef" and lengths.tolist() == [4]


def test_offline_battery_rows_and_macro_average():
    recipe = GlueRecipe(tasks=["order", "similarity", "rte"], steps=6, batch_size=8, budget=0.02)
    rows = [r.as_dict() for r in evaluate_glue(backbone(), recipe, seed=0, log=lambda *_: None)]
    scores = {r["task"]: r["value"] for r in rows if r["metric"] == "score"}
    assert set(scores) == {"glue/order", "glue/similarity", "glue/rte"}
    by_task = {}
    for r in rows:
        by_task.setdefault(r["task"], {})[r["metric"]] = r["value"]
    for name in ("order", "similarity", "rte"):
        metrics = {m: v for m, v in by_task[f"glue/{name}"].items() if m != "score"}
        assert set(metrics) == set(OFFLINE[name].metrics)
        assert all(-1 <= v <= 1 for v in metrics.values())
        assert by_task[f"glue/{name}"]["score"] == pytest.approx(sum(metrics.values()) / len(metrics))
    (macro,) = [r for r in rows if r["metric"] == "glue_score"]
    assert macro["value"] == pytest.approx(sum(scores.values()) / 3) and macro["status"] == "ok"
    # budget scales each task's own sizes: the dev split of `order` has round(500 * 0.02) examples
    assert next(r["n"] for r in rows if r["task"] == "glue/order") == 10
    # a uniform guesser on balanced labels: accuracy 1/k, binary F1 1/2, correlations 0
    chance = {(r["task"], r["metric"]): r["chance"] for r in rows}
    assert chance[("glue/similarity", "pearson")] == 0.0
    for name in ("order", "rte"):
        task = OFFLINE[name]
        expected = {"accuracy": 1 / task.num_labels, "f1": 0.5, "matthews": 0.0}
        assert {m: chance[(f"glue/{name}", m)] for m in task.metrics} == {m: expected[m] for m in task.metrics}
    assert macro["chance"] == pytest.approx(sum(chance[(f"glue/{n}", "score")] for n in ("order", "similarity", "rte")) / 3)


def test_fine_tuning_learns_an_order_task_beyond_chance():
    """A real fine-tune: position-aware backbone, enough steps to learn 'does A come before B'."""
    recipe = GlueRecipe(tasks=["order"], steps=150, batch_size=32, lr=3e-3, budget=0.5)
    rows = [r.as_dict() for r in evaluate_glue(backbone("rotary"), recipe, seed=0, log=lambda *_: None)]
    accuracy = next(r["value"] for r in rows if r["metric"] == "accuracy")
    assert accuracy > 0.6, accuracy


def test_real_glue_from_a_local_directory_in_glues_format(tmp_path):
    glue_dir = write_glue_dir(tmp_path)
    recipe = GlueRecipe(battery="glue", tasks=["rte", "stsb"], steps=3, batch_size=2, glue_dir=str(glue_dir))
    rows = [r.as_dict() for r in evaluate_glue(backbone(), recipe, seed=0, log=lambda *_: None)]
    assert {r["task"] for r in rows} == {"glue/rte", "glue/stsb", "glue"}
    assert all(r["status"] == "ok" and r["value"] is not None and math.isfinite(r["value"]) for r in rows)


def test_real_glue_without_data_is_skipped_with_a_message_not_failed(tmp_path):
    messages = []
    recipe = GlueRecipe(battery="glue", tasks=["cola"], steps=3, glue_dir=str(tmp_path / "nowhere"))
    rows = [r.as_dict() for r in evaluate_glue(backbone(), recipe, seed=0, log=messages.append)]
    assert [r["status"] for r in rows] == ["skipped"]
    assert "nowhere" in rows[0]["source"] and "skipped" in messages[0]


def test_unknown_task_in_recipe_is_a_spec_error():
    with pytest.raises(ValueError, match="did you mean 'order'"):
        GlueRecipe(tasks=["ordr"])


def test_a_bounded_encoding_reads_inputs_cut_to_its_table_and_says_so():
    cls = ENCODINGS.get("learned")
    model = Transformer(CFG, lambda dims: cls(cls.Params(), dims))  # a table of train_len = 32 rows
    recipe = GlueRecipe(tasks=["paraphrase"], steps=3, batch_size=4, budget=0.02)
    rows = [r.as_dict() for r in evaluate_glue(model, recipe, seed=0, log=lambda *_: None)]
    assert all(r["status"] == "ok" for r in rows)
    assert "inputs cut to the encoding's 32 positions" in rows[0]["source"]
