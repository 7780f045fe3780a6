"""Real GLUE from files in GLUE's own format, and from a `datasets` cache, offline.

The fixtures are written here, a few rows per task, with the headers and column
layouts of the original GLUE distribution (CoLA without header, MNLI's many columns
and dev_matched.tsv, stray double quotes as in MRPC's dev set). The expected labels
are written by hand in the Hugging Face `glue` conventions, not taken from the module.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import datasets
import datasets.config
import huggingface_hub.constants
import pytest

from suite.data.glue_data import GLUE_TASKS, GlueSource, GlueUnavailable, available, load_glue
from suite.evaluation.glue_metrics import compute_task
from suite.data.glue_tasks import TASKS, GlueExample, GlueTask

STRAY = 'He said " the witness left .'  # an unbalanced quote: a CSV reader would run lines together


def _mnli_row(a, b, label, dev=False):
    labels = [label] * (5 if dev else 1)
    return ["0", "31193", "31193n", "fiction", "( ( a ) b )", "( c )", "(ROOT (S a))", "(ROOT (S c))", a, b, *labels, label]


# task -> (folder, header or None, row layout, {file name: [(text_a, text_b, label as the file writes it,
#          label as Hugging Face's glue has it, or None: the row is dropped)]})
FIXTURE = {
    "cola": ("CoLA", None, lambda a, b, y: ["gj04", y, "" if y == "1" else "*", a], {
        "train.tsv": [
            ("Our friends won't buy this analysis, let alone the next one we propose.", None, "1", 1),
            ("They drank the pub.", None, "0", 0),
            (STRAY, None, "0", 0),
            ("The more you eat, the less you want.", None, "1", 1),
        ],
        "dev.tsv": [
            ("The sailors rode the breeze clear of the rocks.", None, "1", 1),
            ("The more does Bill smoke, the more Susan hates him.", None, "0", 0),
        ],
    }),
    "sst2": ("SST-2", ["sentence", "label"], lambda a, b, y: [a, y], {
        "train.tsv": [
            ("hide new secretions from the parental units ", None, "0", 0),  # GLUE's own trailing space, kept
            (STRAY, None, "1", 1),
            ("null", None, "0", 0),  # a text, not a missing value
            ("NA", None, "1", 1),
        ],
        "dev.tsv": [
            ("it 's a charming and often affecting journey . ", None, "1", 1),
            ("unflinchingly bleak and desperate ", None, "0", 0),
        ],
    }),
    "mrpc": ("MRPC", ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
             lambda a, b, y: [y, "702876", "702977", a, b], {
        "train.tsv": [
            ("Amrozi accused his brother , whom he called \" the witness \" , of deliberately distorting his evidence .",
             "Referring to him as only \" the witness \" , Amrozi accused his brother of deliberately distorting his evidence .",
             "1", 1),
            ("Yucaipa owned Dominick 's before selling the chain to Safeway in 1998 for $ 2.5 billion .",
             "Yucaipa bought Dominick 's in 1995 for $ 693 million and sold it to Safeway for $ 1.8 billion in 1998 .",
             "0", 0),
        ],
        "dev.tsv": [
            ("He said the foodservice pie business doesn 't fit the company 's long-term growth strategy .",
             "\" The foodservice pie business does not fit our long-term growth strategy .", "1", 1),
            ("Magnarelli said Racicot hated the Iraqi regime .", STRAY, "0", 0),
        ],
    }),
    "stsb": ("STS-B", ["index", "genre", "filename", "year", "old_index", "source1", "source2",
                       "sentence1", "sentence2", "score"],
             lambda a, b, y: ["0", "main-captions", "MSRvid", "2012test", "0001", "none", "none", a, b, y], {
        "train.tsv": [
            ("A plane is taking off.", "An air plane is taking off.", "5.000", 5.0),
            ("A man is playing a large flute.", "A man is playing a flute.", "3.800", 3.8),
            (STRAY, "A woman spoke.", "0.500", 0.5),
        ],
        "dev.tsv": [
            ("A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.", "5.000", 5.0),
            ("A young child is riding a horse.", "A child is riding a horse.", "4.750", 4.75),
        ],
    }),
    "qqp": ("QQP", ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
            lambda a, b, y: ["133273", "213221", "213222", a, b, y], {
        "train.tsv": [
            ("How is the life of a math student?", "Which level of preparation is enough for the exam jlpt5?", "0", 0),
            ("How do I control my horny emotions?", "How do you control your horniness?", "1", 1),
            (STRAY, "What does \"inflation\" mean?", "1", 1),
            ("How do I lose weight?", "", "", None),  # a corrupted row: no second question, no label
        ],
        "dev.tsv": [
            ("Why are we here?", "What is our purpose?", "1", 1),
            ("What is the best way to learn?", "Where is Paris?", "0", 0),
        ],
    }),
    "mnli": ("MNLI", ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
                      "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "label1", "gold_label"],
             _mnli_row, {
        "train.tsv": [
            ("Conceptually cream skimming has two basic dimensions - product and geography.",
             "Product and geography are what make cream skimming work. ", "neutral", 1),
            ("you know during the season and i guess at at your level uh you lose them to the next level",
             "You lose the things to the following level if the people recall.", "entailment", 0),
            ("One of our number will carry out your instructions minutely.",
             "A member of my team will execute your orders with immense precision.", "entailment", 0),
            (STRAY, "Nobody said anything.", "contradiction", 2),
        ],
        "dev_matched.tsv": [
            ("The new rights are nice enough", "Everyone really likes the newest benefits ", "neutral", 1),
            ("This site includes a list of all award winners.", "The Government Executive articles housed on the "
             "website are not able to be searched.", "contradiction", 2),
            ("uh i don't know i i have mixed emotions about him", "I like him for the most part.", "entailment", 0),
        ],
    }),
    "qnli": ("QNLI", ["index", "question", "sentence", "label"], lambda a, b, y: ["0", a, b, y], {
        "train.tsv": [
            ("When did the third Digimon series begin?", "Unlike the two seasons before it, Digimon Tamers takes a "
             "darker and more realistic approach to its story.", "not_entailment", 1),
            ("What two things does Popper argue Tarski's theory involves?", "He bases this interpretation on the fact "
             "that Tarski's theory involves two things.", "entailment", 0),
            ("What did he say?", STRAY, "entailment", 0),
        ],
        "dev.tsv": [
            ("What came into force after the new constitution was herald?", "As of that day, the new constitution "
             "heralding the Second Republic came into force.", "entailment", 0),
            ("What is the first major city in the stream of the Rhine?", "The most important tributaries in this "
             "area are the Ill below of Strasbourg.", "not_entailment", 1),
        ],
    }),
    "rte": ("RTE", ["index", "sentence1", "sentence2", "label"], lambda a, b, y: ["0", a, b, y], {
        "train.tsv": [
            ("No Weapons of Mass Destruction Found in Iraq Yet.", "Weapons of Mass Destruction Found in Iraq.",
             "not_entailment", 1),
            ("A place of sorrow, after Pope John Paul II died, became a place of celebration.",
             "Pope Benedict XVI is the new leader of the Roman Catholic Church.", "not_entailment", 1),
            (STRAY, "Someone said something.", "entailment", 0),
        ],
        "dev.tsv": [
            ("Dana Reeve, the widow of the actor Christopher Reeve, has died of lung cancer at age 44.",
             "Christopher Reeve had an accident.", "not_entailment", 1),
            ("Yet, we now are discovering that antibiotics are losing their effectiveness.",
             "Bacteria is winning the war against antibiotics.", "entailment", 0),
        ],
    }),
}

# Hugging Face `glue`: the dataset's text columns, label names and dev split, per task
HUB = {
    "cola": (("sentence",), ["unacceptable", "acceptable"], "validation"),
    "sst2": (("sentence",), ["negative", "positive"], "validation"),
    "mrpc": (("sentence1", "sentence2"), ["not_equivalent", "equivalent"], "validation"),
    "stsb": (("sentence1", "sentence2"), None, "validation"),
    "qqp": (("question1", "question2"), ["not_duplicate", "duplicate"], "validation"),
    "mnli": (("premise", "hypothesis"), ["entailment", "neutral", "contradiction"], "validation_matched"),
    "qnli": (("question", "sentence"), ["entailment", "not_entailment"], "validation"),
    "rte": (("sentence1", "sentence2"), ["entailment", "not_entailment"], "validation"),
}


def expected(name: str, file: str) -> list[GlueExample]:
    return [GlueExample(a, b, y) for a, b, _, y in FIXTURE[name][3][file] if y is not None]


def dev_file(name: str) -> str:
    return "dev_matched.tsv" if name == "mnli" else "dev.tsv"


def write_glue_dir(root: Path) -> Path:
    for name, (folder, header, layout, files) in FIXTURE.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for file, rows in files.items():
            lines = [header] if header else []
            if file == "dev_matched.tsv":  # five annotators' labels where train has one
                lines = [header[:-2] + [f"label{i}" for i in range(1, 6)] + ["gold_label"]]
            for a, b, y, _ in rows:
                fields = layout(a, b, y, dev=file != "train.tsv") if name == "mnli" else layout(a, b, y)
                lines.append(fields[:-2] if name == "qqp" and y == "" else fields)  # the corrupted row is short
            (root / folder / file).write_text("".join("\t".join(f) + "\n" for f in lines), encoding="utf-8")
    # a decoy: MNLI's mismatched dev set must not be read
    (root / "MNLI" / "dev_mismatched.tsv").write_text((root / "MNLI" / "train.tsv").read_text())
    return root


@pytest.fixture(scope="module")
def glue_dir(tmp_path_factory) -> Path:
    return write_glue_dir(tmp_path_factory.mktemp("glue"))


@pytest.fixture(scope="module")
def hf_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hf_cache")


@pytest.mark.parametrize("name", list(FIXTURE))
def test_reads_each_task_in_glues_own_format(name, glue_dir, hf_cache):
    train, dev = load_glue(name, glue_dir, cache_dir=hf_cache)
    assert train == expected(name, "train.tsv")
    assert dev == expected(name, dev_file(name))
    regression = name == "stsb"
    for example in train + dev:
        assert type(example.label) is (float if regression else int)
        assert isinstance(example.text_a, str) and (example.text_b is None) == (name in ("cola", "sst2"))


def test_every_fixture_has_a_stray_quote_and_the_line_after_it_survives(glue_dir, hf_cache):
    for name in FIXTURE:
        train, dev = load_glue(name, glue_dir, cache_dir=hf_cache)
        assert any(STRAY in (e.text_a, e.text_b) for e in train + dev), name


def test_label_conventions_are_hugging_faces():
    for name, (_, names, dev_split) in HUB.items():
        source = GLUE_TASKS[name]
        assert source.hub_label_names == (tuple(names) if names else None)
        assert source.hub_dev_split == dev_split
        assert source.num_labels == (len(names) if names else 1)
        assert source.kind == ("regression" if names is None else "classification")
    assert GLUE_TASKS["mnli"].file_labels == ("entailment", "neutral", "contradiction")
    assert GLUE_TASKS["qnli"].file_labels == GLUE_TASKS["rte"].file_labels == ("entailment", "not_entailment")
    assert [GLUE_TASKS[n].folder for n in GLUE_TASKS] == ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI", "QNLI", "RTE"]


def test_metadata_is_the_offline_batterys():
    """Each real task carries the same metadata as its offline analogue, under GlueTask's field names."""
    shared = ("glue_analogue", "kind", "num_labels", "metrics", "main_metric", "description", "version")
    task_fields = {f.name for f in dataclasses.fields(GlueTask)}
    source_fields = {f.name for f in dataclasses.fields(GlueSource)}
    assert set(shared) | {"name"} <= task_fields & source_fields
    real = {source.glue_analogue: source for source in GLUE_TASKS.values()}
    assert sorted(real) == sorted(task.glue_analogue for task in TASKS.values())
    for task in TASKS.values():
        source = real[task.glue_analogue]
        for name in ("kind", "num_labels", "metrics", "main_metric"):
            assert getattr(source, name) == getattr(task, name), (task.name, name)
    assert compute_task(GLUE_TASKS["mrpc"], [1, 0, 1], [1, 0, 0]) == {"f1": 2 / 3, "accuracy": 2 / 3}


def test_subsampling_is_deterministic_and_keeps_file_order(tmp_path):
    rows = [f"sentence number {i}\t{i % 2}" for i in range(40)]
    (tmp_path / "SST-2").mkdir()
    (tmp_path / "SST-2" / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    (tmp_path / "SST-2" / "dev.tsv").write_text("sentence\tlabel\n" + "\n".join(rows[:12]) + "\n")
    full_train, full_dev = load_glue("sst2", tmp_path, cache_dir=tmp_path / "cache")
    assert len(full_train) == 40 and len(full_dev) == 12
    a = load_glue("sst2", tmp_path, max_train=10, max_dev=5, seed=0, cache_dir=tmp_path / "cache")
    assert a == load_glue("sst2", tmp_path, max_train=10, max_dev=5, seed=0, cache_dir=tmp_path / "cache")
    train, dev = a
    assert len(train) == 10 and len(dev) == 5
    numbers = [int(e.text_a.split()[-1]) for e in train]
    assert numbers == sorted(numbers) and all(e.label == n % 2 for e, n in zip(train, numbers))
    assert set(dev) <= set(full_dev)
    assert load_glue("sst2", tmp_path, max_train=10, seed=1, cache_dir=tmp_path / "cache")[0] != train
    assert load_glue("sst2", tmp_path, max_train=100, max_dev=12, cache_dir=tmp_path / "cache") == (full_train, full_dev)
    with pytest.raises(ValueError, match="positive"):
        load_glue("sst2", tmp_path, max_train=0)


def test_missing_data_is_unavailable_and_says_where(tmp_path, glue_dir):
    nowhere = tmp_path / "no_glue_here"
    with pytest.raises(GlueUnavailable) as missing_dir:
        load_glue("rte", nowhere)
    assert str(nowhere / "RTE" / "train.tsv") in str(missing_dir.value)
    (tmp_path / "partial" / "MNLI").mkdir(parents=True)
    (tmp_path / "partial" / "MNLI" / "train.tsv").write_text((glue_dir / "MNLI" / "train.tsv").read_text())
    (tmp_path / "partial" / "MNLI" / "dev.tsv").write_text("not the matched dev set\n")
    with pytest.raises(GlueUnavailable) as no_dev:
        load_glue("mnli", tmp_path / "partial")
    assert str(tmp_path / "partial" / "MNLI" / "dev_matched.tsv") in str(no_dev.value)
    assert "train.tsv" not in str(no_dev.value).split("(")[0]  # only the missing file is named as missing

    status = available(tmp_path / "partial")
    assert set(status) == set(GLUE_TASKS) and all(isinstance(v, str) and "GLUE directory" in v for v in status.values())
    assert available(glue_dir) == {name: True for name in GLUE_TASKS}


def test_a_file_not_in_glues_format_is_an_error_not_a_skip(tmp_path):
    (tmp_path / "RTE").mkdir()
    (tmp_path / "RTE" / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailed\n")
    (tmp_path / "RTE" / "dev.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n")
    with pytest.raises(ValueError, match=r"train\.tsv, data row 1: label 'entailed' is none of"):
        load_glue("rte", tmp_path, cache_dir=tmp_path / "cache")
    (tmp_path / "RTE" / "train.tsv").write_text("premise\thypothesis\tlabel\na\tb\tentailment\n")
    with pytest.raises(ValueError, match="not in GLUE's format") as wrong_columns:
        load_glue("rte", tmp_path, cache_dir=tmp_path / "cache")
    assert not isinstance(wrong_columns.value, GlueUnavailable)


def test_unknown_task_suggests_a_name():
    with pytest.raises(ValueError, match="did you mean 'sst2'"):
        load_glue("sst-2")


_CONNECTS: list[str] | None = None  # while a list, every network connection attempt is recorded into it


def _audit(event: str, args) -> None:
    if _CONNECTS is not None and event in ("socket.connect", "socket.getaddrinfo"):
        _CONNECTS.append(f"{event} {args!r}")


sys.addaudithook(_audit)


def test_cache_with_nothing_cached_is_unavailable_at_once_and_offline(tmp_path):
    global _CONNECTS
    flags = (datasets.config.HF_HUB_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE, os.environ.get("HF_HUB_OFFLINE"))
    _CONNECTS = []
    try:
        with pytest.raises(GlueUnavailable) as nothing:
            load_glue("cola", cache_dir=tmp_path)
        status = available(cache_dir=tmp_path)
    finally:
        connects, _CONNECTS = _CONNECTS, None
    assert connects == []  # no socket was opened, so it cannot hang on a network
    message = str(nothing.value)
    assert str(tmp_path) in message and "nyu-mll/glue" in message and "offline" in message
    assert set(status) == set(GLUE_TASKS) and all(isinstance(v, str) for v in status.values())
    # the offline switch is put back as it was
    assert (datasets.config.HF_HUB_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE,
            os.environ.get("HF_HUB_OFFLINE")) == flags


class Glue(datasets.GeneratorBasedBuilder):
    """Writes a cache laid out as `load_dataset("nyu-mll/glue", name)` leaves it, from the fixture's rows."""

    BUILDER_CONFIGS = [datasets.BuilderConfig(name=name) for name in HUB]

    def _info(self):
        columns, names, _ = HUB[self.config.name]
        label = datasets.ClassLabel(names=names) if names else datasets.Value("float32")
        return datasets.DatasetInfo(features=datasets.Features(
            {**{c: datasets.Value("string") for c in columns}, "label": label, "idx": datasets.Value("int32")}))

    def _split_generators(self, dl_manager):
        name = self.config.name
        splits = {"train": "train.tsv", HUB[name][2]: dev_file(name), "test": None}
        return [datasets.SplitGenerator(name=s, gen_kwargs={"file": f}) for s, f in splits.items()]

    def _generate_examples(self, file):
        columns = HUB[self.config.name][0]
        examples = expected(self.config.name, file) if file else expected(self.config.name, "train.tsv")[:1]
        for i, e in enumerate(examples):
            texts = (e.text_a,) if e.text_b is None else (e.text_a, e.text_b)
            yield i, {**dict(zip(columns, texts)), "label": e.label if file else -1, "idx": i}  # test: no labels


@pytest.mark.parametrize("name", ["cola", "stsb", "mnli"])
def test_reads_the_datasets_cache_offline(name, tmp_path):
    builder = Glue(cache_dir=str(tmp_path), config_name=name, repo_id="nyu-mll/glue", dataset_name="glue",
                   hash="0" * 40)
    builder.download_and_prepare()
    assert (tmp_path / "nyu-mll___glue" / name).is_dir()
    global _CONNECTS
    _CONNECTS = []
    try:
        train, dev = load_glue(name, cache_dir=tmp_path)
    finally:
        connects, _CONNECTS = _CONNECTS, None
    assert connects == []
    assert train == expected(name, "train.tsv")  # STS-B's float32 scores read back as the TSV's decimals
    assert dev == expected(name, dev_file(name))
    assert available(cache_dir=tmp_path)[name] is True


def test_fields_past_the_header_are_ignored_and_short_rows_dropped(tmp_path):
    header = "index\tsentence1\tsentence2\tlabel\n"
    (tmp_path / "RTE").mkdir()
    (tmp_path / "RTE" / "train.tsv").write_text(header + "0\ta\tb\tentailment\textra\tfields\n1\tc\n2\td\te\tnot_entailment\n")
    (tmp_path / "RTE" / "dev.tsv").write_text(header + "0\tf\tg\tnot_entailment\n")
    train, dev = load_glue("rte", tmp_path, cache_dir=tmp_path / "cache")
    assert train == [GlueExample("a", "b", 0), GlueExample("d", "e", 1)]
    assert dev == [GlueExample("f", "g", 1)]
