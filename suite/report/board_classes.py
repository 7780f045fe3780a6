"""Which machines computed a board, said on it: the machine classes when its seeds span several,
and the device when its runs trained on a GPU.

Under the pinned numerics (suite.core.numerics) the machine class still decides a figure's bits:
MKL's AVX2 branch is Intel's promise on Intel CPUs only, on an AMD CPU MKL takes its own branch, and
one CPU model name covers several generations (`AMD EPYC`: docs/concepts/reproducibility.md), so
a class is the CPU's vendor, family, model, stepping, SIMD flags and libraries' code paths
(suite.core.machine), and a record that does not name them all is a class of its own ("generation
not recorded"). A board pairs its rows seed by seed, so each seed's rows are best from one class;
different seeds may come from different ones, which then act as a block factor across seeds. A
reader who re-runs a record needs to know which class it names, so a board whose seeds span
classes says which seeds ran where, and names a seed whose rows mix them.
"""

from __future__ import annotations

from collections import defaultdict

from suite.report.board_types import Board


def seed_ranges(seeds: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8'."""
    out: list[str] = []
    last = None
    for seed in sorted(set(seeds)):
        if last is not None and seed == last + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{seed}"
        else:
            out.append(str(seed))
        last = seed
    return ", ".join(out)


def board_runs(board: Board, runs: dict[str, dict]) -> list[dict]:
    """The done training runs of the board's size, task, recipe, seeds and checkpoints (a training-free
    row's checkpoint is its ``trained_as``; a board without a recipe takes every recipe's). A board of
    figures (one with a metric) reads the runs that were evaluated: a tuned grid's sweep trains each
    encoding at every rate at one seed and evaluates only the rate it chose, so the others are no row of
    it. A cost board (no metric) measures every done run."""
    encodings = {entry.trained_as or entry.encoding for entry in board.entries}
    seeds = set(board.seeds)
    return [run for run in runs.values() if run["status"] == "done" and run["size"] == board.size
            and run["task"] == board.task and run["seed"] in seeds and run["encoding"] in encodings
            and (board.training_recipe is None or run.get("recipe") == board.training_recipe)
            and (board.metric is None or run.get("n_evaluations", 0) > 0)]


def _names(rows: set[str], shown: int = 8) -> str:
    """'alibi, fire, nope', or the first ``shown`` of them and 'and N more' (a board's rows, by their
    checkpoints)."""
    ordered = sorted(rows)
    more = f" and {len(ordered) - shown} more" if len(ordered) > shown else ""
    return ", ".join(ordered[:shown]) + more


def class_names(ran: list[dict]) -> dict[object, str]:
    """The identity of each machine class these runs name (suite.core.machine.class_key, as
    suite.report.figures.load_runs reads it) -> its name for a reader: its label, and where two
    classes share a label (another torch build, oneDNN path or SIMD flag than the label shows), the
    fields that tell them apart."""
    labels: dict[object, str] = {}
    for run in ran:
        if run.get("machine_class_key") is not None:
            labels.setdefault(run["machine_class_key"], run["machine_class"])
    sharing: dict[str, list] = defaultdict(list)
    for key, name in labels.items():
        sharing[name].append(key)
    out: dict[object, str] = {}
    for name, keys in sharing.items():
        for key in keys:
            if len(keys) == 1:
                out[key] = name
            elif not isinstance(key, tuple):  # a record that does not name every field
                out[key] = f"{name}, class not fully recorded"
            else:
                others = [dict(k) for k in keys if k != key and isinstance(k, tuple)]
                apart = [f"{field} {value}" for field, value in key if any(o.get(field) != value for o in others)]
                out[key] = f"{name}, {', '.join(apart)}" if apart else name
    return out


def classes_by_seed(ran: list[dict]) -> dict[int, set]:
    """seed -> the machine classes (their identities, suite.core.machine.class_key) named by these
    training runs (a board's: :func:`board_runs`); a run that names none adds nothing."""
    out: dict[int, set] = defaultdict(set)
    for run in ran:
        if (key := run.get("machine_class_key")) is not None:
            out[run["seed"]].add(key)
    return dict(out)


def class_note(board: Board, runs: dict[str, dict]) -> str | None:
    """The board's note when its seeds come from more than one machine class, else None."""
    ran = board_runs(board, runs)
    by_seed = classes_by_seed(ran)
    names = class_names(ran)
    classes = sorted({key for keys in by_seed.values() for key in keys}, key=lambda key: names[key])
    if len(classes) < 2:
        return None
    mixed = sorted(seed for seed, keys in by_seed.items() if len(keys) > 1)
    alone = [key for key in classes if any(keys == {key} for keys in by_seed.values())]
    parts = [f"{names[key]} (seeds {seed_ranges([s for s, keys in by_seed.items() if keys == {key}])})"
             for key in alone]
    text = f"Computed on {len(classes)} machine classes"
    if parts:
        whose = "these seeds'" if mixed else "each seed's"
        text += f", {whose} rows on one: {'; '.join(parts)}"
    text += (". Under the pinned numerics the machine class still decides a figure's last bits, so a record is "
             "bit-identical on the class it names and within the measured cross-class tolerances elsewhere.")
    if mixed:  # a seed whose rows ran on several: its pairs compare arithmetics as well as encodings
        rows_of: dict[str, set[str]] = defaultdict(set)  # class name -> the checkpoints its runs of those seeds trained
        for run in ran:
            if run["seed"] in mixed and (key := run.get("machine_class_key")) is not None:
                rows_of[names[key]].add(run["encoding"])
        shared = "; ".join(f"{name}: {_names(rows)}" for name, rows in sorted(rows_of.items()))
        text += (f" {'Seed' if len(mixed) == 1 else 'Seeds'} {seed_ranges(mixed)} "
                 f"{'mixes' if len(mixed) == 1 else 'mix'} machine classes across rows ({shared}), so "
                 f"{'its' if len(mixed) == 1 else 'their'} paired differences include the classes' own difference "
                 "(within the cross-class tolerance of the kind of figure).")
    return text


def devices_by_seed(board: Board, runs: dict[str, dict]) -> dict[str, set[int]]:
    """device -> the seeds of the board's training runs (:func:`board_runs`) on it: "cpu", or a GPU
    with its precision ("cuda:NVIDIA H200 (bf16-mixed)"), as the runs' records name them
    (suite.training.fit)."""
    where: dict[str, set[int]] = defaultdict(set)
    for run in board_runs(board, runs):
        device = run.get("device") or "cpu"
        where[device if device == "cpu" else f"{device} ({run.get('precision') or 'unknown precision'})"].add(run["seed"])
    return dict(where)


def gpus_of(board: Board, runs: dict[str, dict]) -> list[str]:
    """The GPUs (with their precision) the board's runs trained on; empty for a CPU board."""
    return sorted(d for d in devices_by_seed(board, runs) if d != "cpu")


def device_note(board: Board, runs: dict[str, dict]) -> str | None:
    """The board's note when any of its training runs ran on a GPU, else None. A GPU trains in
    bf16 autocast and evaluates in fp32 on its own kernels: another arithmetic than the CPU
    boards', by more than their tolerances (docs/how-to/run-on-a-gpu.md, "The device effect"),
    so such a board is its own device class."""
    where = devices_by_seed(board, runs)
    gpus = sorted(d for d in where if d != "cpu")
    if not gpus:
        return None
    text = (f"Trained on a GPU, {'; '.join(f'{d}: seeds {seed_ranges(sorted(where[d]))}' for d in gpus)}, and evaluated on "
            "it in fp32: a device class of its own. The GPU's arithmetic moves a figure by more than the CPU classes' "
            "tolerances, so compare this board's rows with each other, not with a CPU board's.")
    if "cpu" in where:
        text += (f" Seeds {seed_ranges(sorted(where['cpu']))} trained on a CPU: this board mixes device classes, and "
                 "its paired differences compare two arithmetics.")
    return text
