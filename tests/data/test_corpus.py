"""The byte tokenizer and the language-modelling corpora."""

from __future__ import annotations

import shutil

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from suite.data.corpus import DOCUMENT_SEPARATOR, load_corpus, split_of
from suite.data.file_corpus import corpus_files
from suite.data.tokenizer import VOCAB_SIZE, decode, encode
from suite.specs import CorpusSpec


@given(st.text())
def test_tokenizer_round_trips_any_text(text):
    ids = encode(text)
    assert ids.dtype == torch.int64 and (ids < VOCAB_SIZE).all() and (ids >= 0).all()
    assert len(ids) == len(text.encode("utf-8"))
    assert decode(ids) == text


def test_stdlib_corpus_is_split_by_file_deterministically():
    spec = CorpusSpec()
    files = corpus_files(spec)
    assert len(files) > 500  # the pinned standard library (corpora/), the same on every machine
    assert not any("site-packages" in rel for rel, _ in files)
    corpus = load_corpus(spec)
    sizes = {s: len(corpus[s]) for s in ("train", "validation", "test")}
    assert sizes["train"] > 10 * sizes["test"] > 0 and sizes["validation"] > 0
    # a file's split depends on its path only: the test split is exactly the test files
    test_files = [p.read_bytes() for rel, p in files if split_of(rel) == "test"]
    assert bytes(corpus["test"].numpy()) == DOCUMENT_SEPARATOR.join(test_files)


def test_folder_corpus_fingerprint_tracks_content(tmp_path, text_folder):
    folder = tmp_path / "texts"
    shutil.copytree(text_folder, folder)
    spec = CorpusSpec(kind="folder", path=str(folder), glob="*.py")
    first = load_corpus(spec).fingerprint
    assert load_corpus(CorpusSpec(kind="folder", path=str(folder), glob="*.py")).fingerprint == first
    victim = sorted(folder.glob("*.py"))[0]
    victim.write_text(victim.read_text() + "\n# changed\n")
    load_corpus.cache_clear()
    assert load_corpus(spec).fingerprint != first


def test_empty_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no files matching"):
        load_corpus(CorpusSpec(kind="folder", path=str(tmp_path), glob="*.txt"))


def test_a_folder_corpus_outside_the_project_needs_to_be_allowed(tmp_path, monkeypatch):
    """A task file from anyone must not read the reviewer's files: a corpus folder lies in the
    project, or in a folder POSBENCH_DATA_DIRS names."""
    import pytest

    from suite.core.yamldoc import SpecErrors
    from suite.specs import load_task

    data = tmp_path / "elsewhere"
    data.mkdir()
    (data / "a.txt").write_text("text " * 2000)
    task = tmp_path / "project" / "tasks" / "mine.yaml"
    task.parent.mkdir(parents=True)
    task.write_text(f"name: mine\nkind: lm\ncorpus: {{kind: folder, path: {data}, glob: '*.txt'}}\n")
    monkeypatch.delenv("POSBENCH_DATA_DIRS", raising=False)
    with pytest.raises(SpecErrors, match="is outside the project"):
        load_task(task)
    monkeypatch.setenv("POSBENCH_DATA_DIRS", str(data))
    assert load_task(task).corpus.path == str(data.resolve())


def test_a_link_out_of_a_folder_corpus_is_not_read(tmp_path, text_folder):
    """A folder corpus is the files inside its folder: a link to a file elsewhere (a reviewer's
    secrets) is not read, a link to a file inside the folder is."""
    folder = tmp_path / "texts"
    shutil.copytree(text_folder, folder)
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'do not train on me'\n")
    (folder / "zz_outside.py").symlink_to(secret)
    inside = sorted(folder.glob("*.py"))[0]
    (folder / "zz_inside.py").symlink_to(inside)
    names = [rel for rel, _ in corpus_files(CorpusSpec(kind="folder", path=str(folder), glob="*.py"))]
    assert "zz_outside.py" not in names and "zz_inside.py" in names
    corpus = load_corpus(CorpusSpec(kind="folder", path=str(folder), glob="*.py"))
    assert b"do not train on me" not in b"".join(bytes(corpus[s].numpy()) for s in ("train", "validation", "test"))
