"""Language-modelling corpora through Hugging Face ``datasets``, offline, memory-mapped.

The corpora the field trains on at real sizes (WikiText-103, PG-19, a code corpus, any
text dataset) come through the library people use for them, never downloaded at run
time (:func:`suite.data.hf_offline.hf_offline`):

* a folder the user has, either written by ``Dataset.save_to_disk`` /
  ``DatasetDict.save_to_disk`` (read by ``datasets.load_from_disk``) or holding data
  files (parquet, arrow, json, csv, text: read by ``datasets.load_dataset(folder)``);
* or a dataset name (``Salesforce/wikitext`` with config ``wikitext-103-raw-v1``)
  already in the ``datasets`` cache, read by ``datasets.load_dataset`` in offline mode.

Each split is turned into bytes once, the texts of its ``text_field`` UTF-8 encoded and
joined by the corpus separator, and written to ``<cache>/<fingerprint>/<split>.u8``; later
runs memory-map that file (``numpy.memmap``), so a training run reads windows from disk
without holding the corpus in memory. The fingerprint hashes the dataset's own
fingerprints (``Dataset._fingerprint``: its content and the transforms that made it), the
field and the byte cap: a changed dataset is a new training run id.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from suite.data.corpus import CORPUS_SOURCES, DOCUMENT_SEPARATOR, SPLITS, Corpus, CorpusSource

if TYPE_CHECKING:  # data never imports specs at run time
    from suite.specs import CorpusSpec

CACHE_ENV = "POSBENCH_CORPUS_CACHE"  # where the byte files go; default ~/.cache/posbench/corpora


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "posbench" / "corpora")


def open_splits(spec: CorpusSpec) -> dict:
    """split name -> ``datasets.Dataset``, for the three splits the spec maps (offline)."""
    import datasets

    from suite.data.hf_offline import hf_offline

    source = spec.dataset
    try:
        with hf_offline():
            folder = Path(source).expanduser()
            if folder.is_dir() and ((folder / "dataset_dict.json").exists() or (folder / "state.json").exists()):
                loaded = datasets.load_from_disk(str(folder))
            else:
                loaded = datasets.load_dataset(str(folder) if folder.is_dir() else source, spec.config)
    except Exception as exc:
        where = "folder" if Path(source).expanduser().is_dir() else "dataset (looked up in the datasets cache, offline)"
        raise ValueError(f"corpus {where} {source!r}{f' config {spec.config!r}' if spec.config else ''} "
                         f"cannot be read: {type(exc).__name__}: {exc}") from exc
    if isinstance(loaded, datasets.Dataset):
        raise ValueError(f"corpus {source!r} is one split; it needs {', '.join(SPLITS)} (a DatasetDict)")
    out = {}
    for split in SPLITS:
        name = getattr(spec, f"{split}_split")
        if name not in loaded:
            raise ValueError(f"corpus {source!r} has no split {name!r} (for {split}); it has {', '.join(loaded)}")
        if spec.text_field not in loaded[name].column_names:
            raise ValueError(f"corpus {source!r}, split {name!r}: no field {spec.text_field!r}; "
                             f"it has {', '.join(loaded[name].column_names)}")
        out[split] = loaded[name]
    return out


def dataset_fingerprint(spec: CorpusSpec, splits: dict) -> str:
    digest = hashlib.sha256(f"{spec.text_field}\0{spec.max_bytes}\0".encode())
    for split in SPLITS:
        digest.update(f"{split}={splits[split]._fingerprint};".encode())
    return digest.hexdigest()[:16]


def write_bytes(dataset, field: str, path: Path, max_bytes: int | None) -> int:
    """The split's texts as bytes, joined by the separator, streamed to ``path`` (atomically)."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    written = 0
    with open(tmp, "wb") as out:
        for batch in dataset.iter(batch_size=1000):
            for text in batch[field]:
                data = (text or "").encode("utf-8")
                if max_bytes is not None and written + len(DOCUMENT_SEPARATOR) + len(data) > max_bytes:
                    continue  # as the folder corpora: a document that does not fit is left out, the rest go on
                if written:
                    out.write(DOCUMENT_SEPARATOR)
                    written += len(DOCUMENT_SEPARATOR)
                out.write(data)
                written += len(data)
    os.replace(tmp, path)
    return written


def memmap(path: Path) -> torch.Tensor:
    """A read-only uint8 tensor over the file's bytes (pages are read as windows touch them)."""
    array = np.memmap(path, dtype=np.uint8, mode="r")
    return torch.from_numpy(array)  # read-only memory: torch warns that it may not be written, and nothing writes it


def load_hf_corpus(spec: CorpusSpec) -> Corpus:
    """The corpus's splits as memory-mapped byte tensors, built on first use."""
    import warnings

    splits = open_splits(spec)
    fingerprint = dataset_fingerprint(spec, splits)
    folder = cache_root() / fingerprint
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for split, dataset in splits.items():
        path = folder / f"{split}.u8"
        if not path.exists():
            sizes[split] = write_bytes(dataset, spec.text_field, path, spec.max_bytes)
        sizes[split] = path.stat().st_size
        if sizes[split] == 0:
            raise ValueError(f"corpus {spec.dataset!r}: split {split} holds no text in field {spec.text_field!r}")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        tensors = {split: memmap(folder / f"{split}.u8") for split in SPLITS}
    total = sum(sizes.values())
    name = spec.dataset + (f" ({spec.config})" if spec.config else "")
    return Corpus(tensors, fingerprint, f"{name} via datasets ({total / 1e6:.1f} MB, memory-mapped)",
                  sum(len(s) for s in splits.values()))


def hf_corpus_fingerprint(spec: CorpusSpec) -> str:
    return dataset_fingerprint(spec, open_splits(spec))


@CORPUS_SOURCES.register("datasets")
class HfDatasets(CorpusSource):
    """A ``datasets`` folder or cached dataset name; its splits' sizes are known once it is read."""

    needs_dataset = True

    def fingerprint(self, spec):
        return hf_corpus_fingerprint(spec)

    def load(self, spec):
        return load_hf_corpus(spec)

    def where(self, spec):
        return spec.dataset

    def resolve(self, spec, base):
        from suite.data.file_corpus import check_data_folder

        folder = base / spec.dataset
        if folder.is_dir():  # a folder beside the task file; otherwise a name in the datasets cache
            check_data_folder(folder, base, "dataset")  # as a folder corpus's: the project's, or one allowed
            return spec.model_copy(update={"dataset": str(folder.resolve())})
        return spec

    def check_recorded(self, spec, project_root):
        from suite.data.file_corpus import check_recorded_folder

        # read as a folder where the reader finds one (open_splits: the name with ~ expanded, from the
        # working folder); a name in the datasets cache has no ~, no '..' and no leading '/' or '.'
        name = spec.dataset or ""
        read_as = Path(name).expanduser()
        if read_as.exists() or read_as.is_absolute() or ".." in read_as.parts or name.startswith((".", "~")):
            check_recorded_folder(name, project_root, "dataset")
