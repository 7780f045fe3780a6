"""Corpora through Hugging Face ``datasets``, offline: the real loading path (load_from_disk,
load_dataset on a data-file folder), on small datasets the tests write in the library's own
on-disk formats; bytes, fingerprints, the memory-mapped cache, errors, and a real fit."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from suite.cli.main import main
from suite.data import hf_corpus
from suite.data.corpus import DOCUMENT_SEPARATOR, SPLITS
from suite.specs import CorpusSpec, load_task

from tests.conftest import write_yaml

TEXTS = {
    "train": ["def f(x):\n    return x + 1\n" * 40, "Ünïcödé text, twice.\n" * 30, "", "class A:\n    pass\n" * 50],
    "validation": ["print('validation')\n" * 60],
    "test": ["import os\nos.getcwd()\n" * 80, "x = [i for i in range(10)]\n" * 40],
}


def expected_bytes(split: str) -> bytes:
    return DOCUMENT_SEPARATOR.join(t.encode() for t in TEXTS[split])


@pytest.fixture(autouse=True)
def corpus_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(hf_corpus.CACHE_ENV, str(tmp_path / "corpus-cache"))
    return tmp_path / "corpus-cache"


@pytest.fixture
def saved(tmp_path) -> Path:
    """A DatasetDict written with save_to_disk."""
    folder = tmp_path / "saved"
    datasets.DatasetDict({s: datasets.Dataset.from_dict({"text": t}) for s, t in TEXTS.items()}).save_to_disk(str(folder))
    return folder


@pytest.fixture
def parquet(tmp_path) -> Path:
    """A folder of parquet data files, one per split (named as load_dataset infers splits)."""
    folder = tmp_path / "parquet"
    folder.mkdir()
    for split, texts in TEXTS.items():
        datasets.Dataset.from_dict({"content": texts}).to_parquet(str(folder / f"{split}.parquet"))
    return folder


@pytest.mark.parametrize("source, field", [("saved", "text"), ("parquet", "content")])
def test_the_bytes_of_every_split_round_trip(source, field, request):
    folder = request.getfixturevalue(source)
    corpus = hf_corpus.load_hf_corpus(CorpusSpec(kind="datasets", dataset=str(folder), text_field=field))
    for split in SPLITS:
        assert bytes(corpus[split].numpy()) == expected_bytes(split)
    assert "memory-mapped" in corpus.description


def test_the_byte_files_are_built_once_and_memory_mapped(saved, corpus_cache):
    spec = CorpusSpec(kind="datasets", dataset=str(saved))
    first = hf_corpus.load_hf_corpus(spec)
    files = sorted(corpus_cache.glob("*/*.u8"))
    assert [f.name for f in files] == ["test.u8", "train.u8", "validation.u8"]
    mtimes = [f.stat().st_mtime_ns for f in files]
    second = hf_corpus.load_hf_corpus(spec)
    assert [f.stat().st_mtime_ns for f in files] == mtimes  # reused, not rebuilt
    assert second.fingerprint == first.fingerprint
    mapped = Path("/proc/self/maps").read_text()
    assert str(next(f for f in files if f.name == "train.u8")) in mapped  # the tensor is the file, mapped


def test_the_fingerprint_follows_the_data(saved, tmp_path):
    spec = CorpusSpec(kind="datasets", dataset=str(saved))
    before = hf_corpus.hf_corpus_fingerprint(spec)
    assert hf_corpus.hf_corpus_fingerprint(spec) == before
    other = tmp_path / "other"
    changed = {**TEXTS, "train": TEXTS["train"][:-1] + ["class B:\n    pass\n" * 50]}
    datasets.DatasetDict({s: datasets.Dataset.from_dict({"text": t}) for s, t in changed.items()}).save_to_disk(str(other))
    assert hf_corpus.hf_corpus_fingerprint(CorpusSpec(kind="datasets", dataset=str(other))) != before
    capped = CorpusSpec(kind="datasets", dataset=str(saved), max_bytes=2000)
    assert hf_corpus.hf_corpus_fingerprint(capped) != before
    assert 0 < len(hf_corpus.load_hf_corpus(capped)["train"]) <= 2000 < len(expected_bytes("train"))


@pytest.mark.parametrize("spec, message", [
    (dict(text_field="body"), "no field 'body'; it has text"),
    (dict(validation_split="dev"), "has no split 'dev' (for validation)"),
])
def test_bad_fields_and_splits_are_named(saved, spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        hf_corpus.load_hf_corpus(CorpusSpec(kind="datasets", dataset=str(saved), **spec))


def test_a_dataset_not_in_the_cache_is_refused_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ValueError, match="looked up in the datasets cache, offline.*cannot be read"):
        hf_corpus.open_splits(CorpusSpec(kind="datasets", dataset="Salesforce/wikitext", config="wikitext-103-raw-v1"))


def test_a_datasets_corpus_needs_a_dataset(tmp_path):
    with pytest.raises(ValueError, match="needs dataset"):
        CorpusSpec(kind="datasets")


def test_a_dataset_folder_outside_the_project_is_refused(saved, project_root: Path, tmp_path_factory):
    """As a folder corpus's: a task file from anyone must not read the reviewer's files."""
    import shutil

    elsewhere = tmp_path_factory.mktemp("elsewhere") / "mydata"
    shutil.copytree(saved, elsewhere)
    task = write_yaml(project_root / "tasks" / "hf.yaml", {"name": "hf", "kind": "lm",
                                                           "corpus": {"kind": "datasets", "dataset": str(elsewhere)}})
    with pytest.raises(Exception, match="outside the project"):
        load_task(task)


def test_a_task_names_a_folder_beside_it_and_trains_on_it(saved, project_root: Path, tiny_grid):
    """A real Lightning fit and evaluation on a datasets corpus (windows read from the map)."""
    import shutil

    shutil.copytree(saved, project_root / "tasks" / "mydata")
    write_yaml(project_root / "tasks" / "hf.yaml", {"name": "hf", "kind": "lm",
                                                    "corpus": {"kind": "datasets", "dataset": "mydata"}})
    assert load_task(project_root / "tasks" / "hf.yaml").corpus.dataset == str((project_root / "tasks" / "mydata").resolve())
    grid = tiny_grid(name="hf", encodings=["rope"], tasks=["hf"], scales=[1, 2],
                     train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 2},
                     eval={"tokens": 512, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    (run,) = [json.loads(p.read_text()) for p in (project_root / "results" / "runs").glob("*.json")]
    assert run["status"] == "done" and "via datasets" in run["provenance"]["corpus"]
    evals = [json.loads(p.read_text()) for p in (project_root / "results" / "evals").glob("*.json")]
    assert sorted(m["scale"] for e in evals for m in e["metrics"] if m["metric"] == "bpb") == [1, 2]
