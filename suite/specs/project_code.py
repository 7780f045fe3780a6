"""The external code a project's own specs name: the only code a record may make posbench import.

A record (a published snapshot's, a submission's) holds the run it came from, with its
encoding's ``impl``; rebuilding the run from it (``posbench verify``, ``replicate``, ``eval``)
would import whatever that names, an absolute ``.py`` path included, before the record's id
is even checked. So a record's code is checked against the project first: every external
reference in it (``module:Class`` or ``file.py:Class``, resolved where the record says its spec
was) must be one that a spec in the project's ``encodings/`` names, resolved where that spec
is. :func:`check_record_code` refuses any other with one line before anything is imported, and
:func:`project_code` makes the registries refuse any other while a record's run is rebuilt
and run (suite.core.registry.only_refs).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from suite.core.registry import LookupFailed, only_refs, ref_key
from suite.core.yamldoc import SpecErrors, read_yaml

CODE_KEYS = ("impl", "evaluator", "generator")  # the spec keys whose value may be module:Class or file.py:Class


def _refs_in(value, source: Path, out: set) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in CODE_KEYS and isinstance(item, str) and ":" in item:
                try:
                    out.add(ref_key(item, source.parent))
                except LookupFailed:
                    pass
            else:
                _refs_in(item, source, out)
    elif isinstance(value, list):
        for item in value:
            _refs_in(item, source, out)


def project_refs(root: Path) -> frozenset[str]:
    """Every external reference the specs under ``root`` (encodings/, grids/, tasks/) name, resolved
    where each spec lies; read as data (bounded, nothing imported)."""
    out: set[str] = set()
    for folder in ("encodings", "grids", "tasks"):
        for path in sorted((Path(root) / folder).glob("*.yaml")):
            try:
                doc = read_yaml(path)
            except SpecErrors:
                continue
            _refs_in(doc.data, path.resolve(), out)
    return frozenset(out)


def record_refs(run: dict, where: str = "run") -> list[tuple[str, str, Path | None]]:
    """(field, reference, the folder it resolves against) of every external reference in a
    record's run (or evaluation) dict, its parents' included."""
    found = []
    if not isinstance(run, dict):
        return found
    source = run.get("encoding_source")
    folder = Path(source).parent if isinstance(source, str) and source else None
    encoding = run.get("encoding")
    if isinstance(encoding, dict):
        for field, value in (("encoding.impl", encoding.get("impl")),
                             ("encoding.train_positions.impl", (encoding.get("train_positions") or {}).get("impl")
                              if isinstance(encoding.get("train_positions"), dict) else None)):
            if isinstance(value, str) and ":" in value:
                found.append((f"{where}.{field}", value, folder))
    for key in ("run", "parent"):
        if isinstance(run.get(key), dict):
            found += record_refs(run[key], f"{where}.{key}")
    if isinstance(run.get("evaluator"), str) and ":" in run["evaluator"]:
        found.append((f"{where}.evaluator", run["evaluator"], None))
    return found


def check_record_code(data: dict, root: Path, where: str = "run", allowed: frozenset | None = None) -> None:
    """ValueError naming the field when the record's run names code the project's specs do not
    (``allowed``: :func:`project_refs` of ``root``, when the caller has it already)."""
    allowed = project_refs(root) if allowed is None else allowed
    for field, ref, folder in record_refs(data, where):
        try:
            key = ref_key(ref, folder)
        except LookupFailed as exc:
            raise ValueError(f"{field}: {exc}") from None
        if key not in allowed:
            raise ValueError(f"{field}: {ref!r} is code that no spec of this project names: a record chooses no code "
                             "(refused before anything was imported)")


def check_record_data(data: dict, root: Path, where: str = "run") -> None:
    """ValueError naming the field when the record's run, or a parent it continues from, reads a
    corpus where no task file of the project at ``root`` may read (a folder outside it and the
    folders POSBENCH_DATA_DIRS allows: suite.data.file_corpus). A record is a stranger's, and its
    id is no check: whoever edits a record can hash it again."""
    import pydantic

    from suite.data.corpus import CorpusPathError, source_of
    from suite.specs import CorpusSpec

    level, field = data, where
    while isinstance(level, dict):
        corpus = level.get("task", {}).get("corpus") if isinstance(level.get("task"), dict) else None
        if isinstance(corpus, dict):
            try:
                spec = CorpusSpec.model_validate(corpus)
            except pydantic.ValidationError:
                spec = None  # not a corpus this version reads: rebuilding the run refuses it, at its field
            if spec is not None:
                try:
                    source_of(spec).check_recorded(spec, root)
                except CorpusPathError as exc:
                    raise ValueError(f"{field}.task.corpus.{exc.field}: {exc}") from None
        level, field = level.get("parent"), f"{field}.parent"


@contextlib.contextmanager
def project_code(root: Path):
    """Within this block the registries import only the external code the project's specs name."""
    with only_refs(project_refs(root)):
        yield
