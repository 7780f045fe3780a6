"""The key-token diagnostic (suite.evaluation.evaluators.key_tokens): its selection against the
authors' ``find_key_token`` (golden), the short context computed exactly, ``key_bpb`` against
bits per byte computed by hand on the same positions, the corpus check, the file's validation,
and a real grid run that records it."""

from __future__ import annotations

import copy
import json

import duckdb
import pytest
import torch
import torch.nn.functional as F

from suite.cli.main import main
from suite.data.corpus import load_corpus
from suite.evaluation.base import EvalContext
from suite.evaluation.evaluators import key_tokens as kt
from suite.evaluation.evaluators.extrapolation import evaluation_span
from suite.evaluation.evaluators.key_tokens import (ALPHA, AUTHORS_ALPHA, AUTHORS_BETA, BETA, BYTES_PER_TOKEN, KeyTokenFileError, KeyTokens, choose_key_tokens,
                                                     key_token_mask, read_key_tokens, short_log_probs)
from suite.plan.grid import load_plan
from suite.specs import Project

from tests.conftest import REPO, write_yaml
from tests.encodings.helpers import build_model

GOLDEN = json.loads((REPO / "tests" / "golden" / "key-tokens.json").read_text())
L, TOKENS = 16, 1024  # helpers' models train at 16; the span is a multiple of every eval length


def test_the_thresholds_are_the_authors_defaults_alpha_per_byte():
    """Their per-token alpha, a quarter of it per byte (about 4 bytes per token of their
    evaluators' tokenizers); their beta as it is (see suite.evaluation.evaluators.key_tokens)."""
    assert (AUTHORS_ALPHA, AUTHORS_BETA) == (GOLDEN["defaults"]["alpha"], GOLDEN["defaults"]["beta"]) == (2, -2)
    assert (ALPHA, BETA) == (AUTHORS_ALPHA / BYTES_PER_TOKEN, AUTHORS_BETA) == (0.5, -2)


@pytest.mark.parametrize("case", range(len(GOLDEN["cases"])))
def test_the_key_tokens_are_the_ones_the_authors_find_key_token_picks(case):
    c = GOLDEN["cases"][case]
    for seq, expected in enumerate(c["key_tokens"]):
        # the golden tables give log p of each token p; target j (predicted from tokens 0..j) is token j + 1
        long = torch.tensor(GOLDEN["long_logp"][seq][1:], dtype=torch.float64)
        short = torch.tensor(GOLDEN["short_logp"][seq][1:], dtype=torch.float64)
        mask = key_token_mask(long, short, c["alpha"], c["beta"], c["trunc_len"])
        assert mask.nonzero().squeeze(1).tolist() == expected, (c, seq)


def test_the_short_context_is_each_targets_own_truncated_window():
    model = build_model("rope").eval()
    torch.manual_seed(0)
    span, K = torch.randint(0, 256, (200,)), 12
    short = short_log_probs(model, span, K, batch_size=7)
    assert short.shape == (199,) and bool(short[: K - 1].isnan().all()) and not bool(short[K - 1:].isnan().any())
    for t in (K - 1, K, 57, 198):  # target t is span[t + 1]; its window is the K tokens before it
        with torch.no_grad():
            logp = model(span[t + 1 - K: t + 1][None]).float().log_softmax(-1)[0, -1, span[t + 1]]
        assert short[t].item() == pytest.approx(logp.item(), abs=1e-5), t


def local_task(project_root, text_folder):
    return write_yaml(project_root / "tasks" / "local.yaml",
                      {"name": "local", "kind": "lm", "corpus": {"kind": "folder", "path": str(text_folder), "glob": "*.py"}})


def key_file(project_root, reference, alpha=1e-6, beta=-20.0, scales=(1, 2, 4)) -> dict:
    """A key-token file for task ``local`` chosen by ``reference`` (thresholds that a tiny random
    model passes, so that there are key tokens to score), as scripts/key_tokens.py writes it."""
    from suite.specs import load_task

    task = load_task(project_root / "tasks" / "local.yaml")
    corpus = load_corpus(task.corpus)
    doc = {"format": 1, "task": "local", "corpus_fingerprint": corpus.fingerprint,
           "reference": {"run_id": "0123456789abcdef", "grid": "tests", "encoding": "rope", "size": "helpers",
                         "seed": 1, "train": {"seq_len": 4 * L}},
           "alpha": alpha, "beta": beta, "short_context": L, "train_len": L, "tokens": TOKENS,
           "scales": choose_key_tokens(reference, corpus["test"], L, list(scales), TOKENS, L, alpha, beta, batch_size=16)}
    path = project_root / "tasks" / "key_tokens" / "local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return doc


def an_evaluation(project_root, scale):
    grid = write_yaml(project_root / "grids" / "keys.yaml", {
        "name": "keys", "encodings": ["rope"], "sizes": ["tiny"], "tasks": ["local"], "seeds": [0],
        "scales": [1, 2, 4], "train": {"steps": 10, "batch_size": 4, "seq_len": L, "warmup_steps": 2},
        "eval": {"tokens": TOKENS, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False},
        "evaluations": [{"evaluator": "key_tokens", "settings": {"tokens": TOKENS}}]})
    _, plan = load_plan(grid, Project(project_root))
    return next(e for e in plan.evaluations if e.evaluator == "key_tokens" and e.scale == scale)


def evaluate(model, evaluation, tmp_path):
    return KeyTokens.evaluate(model, EvalContext(evaluation, KeyTokens.Settings.model_validate(evaluation.settings),
                                                 tmp_path, log=lambda _: None))


def test_key_bpb_is_the_bits_per_byte_of_the_key_positions(project_root, text_folder, tmp_path):
    local_task(project_root, text_folder)
    doc = key_file(project_root, build_model("rope", seed=1).eval())
    model = build_model("alibi", seed=0).eval()  # a real model (helpers'), not the reference
    test = load_corpus(load_plan_task(project_root).corpus)["test"]
    for scale in (2, 4):
        at = next(s for s in doc["scales"] if s["scale"] == scale)
        assert at["indices"] and all(i % (scale * L) >= L - 1 for i in at["indices"])
        [row] = evaluate(model, an_evaluation(project_root, scale), tmp_path).metrics
        T = scale * L
        span = evaluation_span(test, TOKENS, T).long()
        with torch.no_grad():  # by hand: each window's forward, its bits, the key positions' mean
            logits = model(span[:-1].view(-1, T)).float()
            bits = F.cross_entropy(logits.transpose(1, 2), span[1:].view(-1, T), reduction="none") / torch.log(torch.tensor(2.0))
        expected = bits.reshape(-1)[at["indices"]].mean().item()
        assert (row.metric, row.status, row.n, row.scale, row.eval_len) == ("key_bpb", "ok", len(at["indices"]), scale, T)
        assert row.value == pytest.approx(expected, rel=1e-5) and row.stderr is not None and row.stderr > 0
        assert row.value != pytest.approx(bits.mean().item(), rel=1e-3)  # the key positions, not every byte
    [one] = evaluate(model, an_evaluation(project_root, 1), tmp_path).metrics  # 1x: no token has more than K of context
    assert one.status == "not_applicable" and one.n == 0


def load_plan_task(project_root):
    from suite.specs import load_task

    return load_task(project_root / "tasks" / "local.yaml")


def test_a_corpus_that_is_not_the_files_is_refused(project_root, text_folder, tmp_path):
    local_task(project_root, text_folder)
    doc = key_file(project_root, build_model("rope", seed=1).eval(), scales=(1, 2))
    path = project_root / "tasks" / "key_tokens" / "local.json"
    path.write_text(json.dumps({**doc, "corpus_fingerprint": "f" * 16}))
    with pytest.raises(KeyTokenFileError, match=r"local\.json: chosen on corpus f{16}, but task local's corpus is"):
        evaluate(build_model("alibi").eval(), an_evaluation(project_root, 2), tmp_path)


VALID = {"format": 1, "task": "lm", "corpus_fingerprint": "0123456789abcdef",
         "reference": {"run_id": "0123456789abcdef", "grid": "grids/key-token-reference.yaml", "encoding": "rope",
                       "size": "tiny", "seed": 0, "train": {"steps": 600, "seq_len": 1024, "lr": 0.003}},
         "alpha": 2.0, "beta": -2.0, "short_context": 64, "train_len": 64, "tokens": 1024,
         "scales": [{"scale": 1, "eval_len": 64, "windows": 16, "indices": []},
                    {"scale": 2, "eval_len": 128, "windows": 8, "indices": [64, 200, 1023]}]}


def hostile(path, change):
    doc = copy.deepcopy(VALID)
    change(doc)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("change, field", [
    (lambda d: d["scales"][1]["indices"].append(-3), r"scales\.1\.indices\.3"),
    (lambda d: d["scales"][1]["indices"].insert(0, 900), r"scales\.1: .*strictly increasing"),
    (lambda d: d["scales"][1]["indices"].append(1024), r"scales\.1: .*beyond the 8 windows of 128"),
    (lambda d: d["scales"][1].update(indices=[10]), r"index 10 has less than short_context 64"),
    (lambda d: d["scales"][1].update(indices=["__import__('os')"]), r"scales\.1\.indices\.0"),
    (lambda d: d["scales"][1].update(indices=["64"]), r"scales\.1\.indices\.0: Input should be a valid integer"),
    (lambda d: d.update(short_context=True), r"short_context"),
    (lambda d: d["scales"][1].update(eval_len=256), r"eval_len 256 is not 2 x train_len 64"),
    (lambda d: d["scales"][1].update(windows=10**9), r"scales\.1\.windows"),
    (lambda d: d["scales"].append(d["scales"][0]), r"a scale is listed twice"),
    (lambda d: d.update(alpha=float("inf")), r"alpha"),
    (lambda d: d.update(beta=5), r"beta"),
    (lambda d: d.update(corpus_fingerprint="../../etc/passwd"), r"corpus_fingerprint"),
    (lambda d: d.update(format=2), r"format"),
    (lambda d: d.update(surprise=1), r"surprise"),
    (lambda d: d["reference"].pop("run_id"), r"reference\.run_id"),
    (lambda d: d.update(scales=[]), r"scales"),
])
def test_a_hostile_key_token_file_is_refused_naming_the_file_and_field(tmp_path, change, field):
    assert read_key_tokens(hostile(tmp_path / "lm.json", lambda d: None)).at(2).indices == [64, 200, 1023]
    with pytest.raises(KeyTokenFileError, match=rf"lm\.json: .*{field}"):
        read_key_tokens(hostile(tmp_path / "lm.json", change))


def test_a_file_that_is_not_json_missing_or_too_big_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "lm.json"
    with pytest.raises(KeyTokenFileError, match=r"lm\.json: no key-token file"):
        read_key_tokens(path)
    path.write_text("{'format': 1")
    with pytest.raises(KeyTokenFileError, match=r"lm\.json: not JSON"):
        read_key_tokens(path)
    path.write_text(json.dumps(VALID))
    monkeypatch.setattr(kt, "MAX_FILE_BYTES", 100)
    with pytest.raises(KeyTokenFileError, match=r"lm\.json: \d+ bytes, more than a key-token file's 100"):
        read_key_tokens(path)


def test_the_committed_file_is_valid_and_was_chosen_by_the_reference_grid_for_the_diagnostics_grid():
    """Its reference is the run grids/key-token-reference.yaml plans (same id, so the same recipe and
    corpus), and its settings are those of grids/diagnostics.yaml's key_tokens evaluations."""
    keys = read_key_tokens(REPO / "tasks" / "key_tokens" / "lm.json")
    _, reference = load_plan(REPO / "grids" / "key-token-reference.yaml", Project(REPO))
    [run] = reference.runs
    if run.data_fingerprint != keys.corpus_fingerprint:  # the corpus is the running Python's standard library
        pytest.skip(f"chosen on corpus {keys.corpus_fingerprint}; this Python's standard library is {run.data_fingerprint}")
    assert keys.reference.run_id == run.run_id
    assert keys.reference.train == run.train.model_dump(exclude_none=True) and run.train.seq_len == 16 * 64
    diagnostics, plan = load_plan(REPO / "grids" / "diagnostics.yaml", Project(REPO))
    [settings] = {json.dumps(e.settings, sort_keys=True) for e in plan.evaluations if e.evaluator == "key_tokens"}
    assert keys.tokens == json.loads(settings)["tokens"] == diagnostics.spec.eval.tokens
    assert (keys.alpha, keys.beta, keys.train_len, keys.short_context) == (ALPHA, BETA, diagnostics.spec.train.seq_len, 64)
    assert [s.scale for s in keys.scales] == diagnostics.spec.scales and keys.at(1).indices == []


def test_a_grid_records_key_bpb_at_every_scale(project_root, text_folder):
    local_task(project_root, text_folder)
    key_file(project_root, build_model("rope", seed=1).eval(), scales=(1, 2))
    grid = write_yaml(project_root / "grids" / "keys.yaml", {
        "name": "keys", "encodings": ["nope", "alibi"], "sizes": ["tiny"], "tasks": ["local"], "seeds": [0],
        "scales": [1, 2], "train": {"steps": 10, "batch_size": 4, "seq_len": L, "warmup_steps": 2},
        "eval": {"tokens": TOKENS, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False},
        "evaluations": [{"evaluator": "key_tokens", "settings": {"tokens": TOKENS}}]})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        rows = con.execute("""SELECT encoding, metrics.scale, metrics.status, value, n FROM metrics JOIN evaluations USING (eval_id)
                              WHERE metric = 'key_bpb' ORDER BY ALL""").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [(e, s, st) for e in ("alibi", "nope")
                                                  for s, st in ((1, "not_applicable"), (2, "ok"))]
    assert all(r[3] > 0 and r[4] > 0 for r in rows if r[2] == "ok")


@pytest.mark.parametrize("file", ["/etc/passwd", "../../etc/passwd", "tasks/key_tokens/../../secrets.json",
                                  "tasks/key_tokens/{task.__class__}.json", "results/runs/x.json"])
def test_a_setting_from_a_record_names_no_path_outside_the_key_token_folder(file):
    """Settings travel in records from anyone (verify re-runs them): the file is one of the
    project's key-token files or the settings are refused before anything is read."""
    import pydantic

    from suite.evaluation.evaluators.key_tokens import KeyTokenSettings

    with pytest.raises(pydantic.ValidationError):
        KeyTokenSettings.model_validate({"file": file})
