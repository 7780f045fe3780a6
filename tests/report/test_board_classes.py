"""A board whose seeds were computed on more than one machine class says which seeds ran where
(suite.report.board_classes), since the machine class decides a figure's bits under the pinned
numerics, and one CPU model name covers several classes. Built by ``ingest`` and the leaderboard
from real records: the published four-layer board, whose seeds came from two classes, cut to three
encodings and the first seeds of each class (a cut, so the ingests take the same time as more
seeds are published)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from suite.core import machine
from suite.report.board_classes import board_runs, seed_ranges
from suite.report.board_types import Board, Entry
from suite.report.figures import Recipe
from suite.results.snapshot_files import EVALS, RUNS, read_records

from tests.report.records_to_boards import leaderboard_of
from tests.snapshot_cut import cut_snapshot

BOARD = ("tiny-4l", "lm")
ENCODINGS = ("nope", "rope", "yarn")
SEEDS_PER_CLASS = 3


def test_seed_ranges_join_consecutive_seeds():
    assert seed_ranges([7, 0, 1, 2, 5, 8]) == "0-2, 5, 7-8"
    assert seed_ranges([3]) == "3" and seed_ranges([]) == ""


def board_notes(root: Path, runs: list, evals: list) -> str:
    board = leaderboard_of(root, runs, evals).find("lm-tiny-4l-lm")
    assert board is not None
    return " ".join(board.notes)


def with_numerics(record, **changed):
    """The record as if computed where its numerics name these fields instead."""
    numerics = {**record.provenance.numerics, **changed}
    return dataclasses.replace(record, provenance=dataclasses.replace(record.provenance, numerics=numerics))


def class_label(record) -> str:
    return machine.label(record.provenance.numerics)


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """The board's done runs of ENCODINGS and their evaluations, at the first SEEDS_PER_CLASS seeds
    of each machine class, with {class: its seeds}."""
    folder = tmp_path_factory.mktemp("board-classes") / "snapshot"
    cut_snapshot(folder, ["power-lm-tiny-4l"], lambda r: (r["size"], r["task"]) == BOARD
                 and r["encoding"] in ENCODINGS and r["status"] == "done")
    runs = read_records(folder / RUNS, "training_run")
    seeds_of: dict[str, set[int]] = {}
    for r in runs:
        seeds_of.setdefault(class_label(r), set()).add(r.seed)
    if len(seeds_of) < 2:
        pytest.skip("the published four-layer board names one machine class")
    classes = {name: set(sorted(seeds)[:SEEDS_PER_CLASS]) for name, seeds in seeds_of.items()}
    kept = set().union(*classes.values())
    runs = [r for r in runs if r.seed in kept]
    ids = {r.run_id for r in runs}
    return runs, [e for e in read_records(folder / EVALS, "evaluation") if e.run_id in ids], classes


def test_a_board_of_two_machine_classes_says_which_seeds_ran_where(cut, tmp_path):
    runs, evals, classes = cut
    notes = board_notes(tmp_path, runs, evals)
    expected = "; ".join(f"{name} (seeds {seed_ranges(sorted(seeds))})" for name, seeds in sorted(classes.items()))
    assert f"Computed on {len(classes)} machine classes, each seed's rows on one: {expected}." in notes
    assert "machine classes across rows" not in notes  # no seed mixes them


def test_a_board_of_one_machine_class_says_nothing_of_it(cut, tmp_path):
    runs, evals, _ = cut
    one = runs[0].provenance.numerics
    notes = board_notes(tmp_path, [with_numerics(r, **one) for r in runs], evals)
    assert "Computed on" not in notes and "across rows" not in notes


def test_a_seed_whose_rows_mix_machine_classes_is_named(cut, tmp_path):
    """A database of one's own results may pair figures of two classes within a seed; the board
    names that seed and the classes it mixes."""
    runs, evals, _ = cut
    seed = min(r.seed for r in runs)
    doctored = [with_numerics(r, cpu="Another CPU") if (r.seed, r.encoding) == (seed, "rope") else r for r in runs]
    notes = board_notes(tmp_path, doctored, evals)
    another = machine.label(next(r for r in doctored if (r.seed, r.encoding) == (seed, "rope")).provenance.numerics)
    assert f"Seed {seed} mixes machine classes across rows (" in notes
    assert f"{another}: rope;" in notes or f"{another}: rope)" in notes  # the row it computed, by its checkpoint
    assert "so its paired differences include the classes' own difference" in notes


# every field of a machine class (suite.core.machine.CLASS_FIELDS), as a record of the AMD EPYC of family 25,
# model 1 names them
ZEN3 = {"cpu": "AMD EPYC", "vendor": "AuthenticAMD", "cpu_family": "25", "cpu_model_id": "1", "stepping": "1",
        "simd": "sse4_2 avx avx2 fma f16c", "mkl_branch": "AUTO,STRICT", "onednn_isa": "Intel AVX2",
        "torch": "2.13.0+cpu", "blas": "mkl", "machine": "x86_64"}


def test_one_cpu_model_name_of_two_generations_is_two_classes(cut, tmp_path):
    """`AMD EPYC` names Zen 2, 3 and 4 parts: rows whose records name the same CPU model and every
    class field alike but the model number are another class, and the board says so (the name alone
    said nothing)."""
    runs, evals, _ = cut
    seed = max(r.seed for r in runs)
    zen4 = {**ZEN3, "cpu_model_id": "17"}
    doctored = [with_numerics(r, **(zen4 if r.seed == seed else ZEN3)) for r in runs]
    assert {r.provenance.cpu for r in doctored} == {"AMD EPYC"}
    notes = board_notes(tmp_path, doctored, evals)
    assert "Computed on 2 machine classes, each seed's rows on one: " in notes
    assert f"{machine.label(zen4)} (seeds {seed})" in notes
    assert f"{machine.label(ZEN3)} (seeds {seed_ranges(sorted({r.seed for r in runs} - {seed}))})" in notes


def test_two_classes_of_one_label_are_told_apart_by_the_fields_that_differ(cut, tmp_path):
    """Another torch build is another class though the label (CPU, generation, SIMD width, MKL
    branch) reads the same: the board counts two classes and names each with its torch."""
    runs, evals, _ = cut
    seed = max(r.seed for r in runs)
    newer = {**ZEN3, "torch": "2.14.0+cpu"}
    assert machine.label(newer) == machine.label(ZEN3)
    notes = board_notes(tmp_path, [with_numerics(r, **(newer if r.seed == seed else ZEN3)) for r in runs], evals)
    assert "Computed on 2 machine classes, each seed's rows on one: " in notes
    assert f"{machine.label(ZEN3)}, torch 2.14.0+cpu (seeds {seed})" in notes
    assert f"{machine.label(ZEN3)}, torch 2.13.0+cpu (seeds " in notes


def test_a_failed_run_adds_no_machine_class(cut, tmp_path):
    """A run that failed before it trained names no numerics and is no row of the board: the note of
    a board computed on one class stays away, where reading the failed run as "an unnamed CPU" made two."""
    runs, evals, _ = cut
    seed = max(r.seed for r in runs)
    gone = next(r for r in runs if (r.seed, r.encoding) == (seed, "rope"))
    broken = dataclasses.replace(gone, status="failed", reason="diverged", step=0, checkpoint=None,
                                 provenance=dataclasses.replace(gone.provenance, numerics=None))
    kept = [broken if r is gone else with_numerics(r, **ZEN3) for r in runs]
    notes = board_notes(tmp_path, kept, [e for e in evals if e.run_id != gone.run_id])
    assert "Computed on" not in notes and "unnamed CPU" not in notes


def row(run_id: str, **changed) -> dict:
    """A run as suite.report.figures.load_runs reads it: done, evaluated, tiny-4l/lm, seed 0, one recipe."""
    recipe = Recipe(64, 1000, 16, 0.003)
    return {"run_id": run_id, "status": "done", "size": "tiny-4l", "task": "lm", "seed": 0, "encoding": "rope",
            "recipe": recipe, "n_evaluations": 5, **changed}


def test_a_boards_runs_are_its_recipes_done_and_evaluated_ones():
    """What the note reads: another learning rate is another recipe (its label is the same without a
    tuned sweep); a tuned grid's sweep run of a rate it did not choose has no evaluation, so no row on
    a board of figures, while a cost board (no metric) measures it; a failed run is nobody's row."""
    recipe = Recipe(64, 1000, 16, 0.003)
    other_rate = Recipe(64, 1000, 16, 0.01)
    assert other_rate.label == recipe.label
    runs = {r["run_id"]: r for r in (row("kept"), row("other-rate", recipe=other_rate), row("unchosen", n_evaluations=0),
                                     row("failed", status="failed"), row("other-seed", seed=9))}
    figures = Board(id="b", kind="language_modelling", title="", size="tiny-4l", task="lm", metric="bpb", columns=[],
                    entries=[Entry("rope", "RoPE", "rotary", None)], seeds=[0], method="", recipe=recipe.label,
                    training_recipe=recipe)
    assert [r["run_id"] for r in board_runs(figures, runs)] == ["kept"]
    cost = dataclasses.replace(figures, metric=None)
    assert [r["run_id"] for r in board_runs(cost, runs)] == ["kept", "unchosen"]
