"""The GLUE-style boards name the tasks at chance and, for a setting that fine-tunes some of the
battery's tasks, the tasks it leaves out: built by ``ingest`` into a real DuckDB file from
records written with ``write_record``, the figures chosen so each verdict is known."""

from __future__ import annotations

import pytest

from suite.report.leaderboard import build
from suite.report.kinds.glue import tasks_at_chance
from suite.results.store import connect_readonly
from tests.report.test_site import Results

# per task: (chance, scores of seeds 0-2) for each encoding; "order" is learned by both encodings,
# "rte" by ALiBi alone (one row above chance is enough), "qa_alignment" by neither
FULL = {
    "order": (0.5, {"alibi": (0.95, 0.97, 0.96), "rope": (0.90, 0.93, 0.91)}),
    "rte": (0.5, {"alibi": (0.60, 0.62, 0.61), "rope": (0.49, 0.52, 0.50)}),
    "qa_alignment": (0.5, {"alibi": (0.49, 0.52, 0.50), "rope": (0.51, 0.48, 0.50)}),
}


def glue_rows(scores: dict[str, tuple[float, float]]) -> list[dict]:
    """An evaluation's rows: each task's score (with its chance level) and the macro average."""
    rows = [{"task": f"glue/{task}", "metric": "score", "value": value, "n": 500, "scale": None, "eval_len": None,
             "stderr": None, "window_policy": None, "source": "offline battery", "chance": chance, "status": "ok"}
            for task, (value, chance) in scores.items()]
    overall = sum(v for v, _ in scores.values()) / len(scores)
    chance = sum(c for _, c in scores.values()) / len(scores)
    rows.append({"task": "glue", "metric": "glue_score", "value": overall, "n": len(scores), "scale": None,
                 "eval_len": None, "stderr": None, "window_policy": None, "source": "offline battery",
                 "chance": chance, "status": "ok"})
    return rows


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    root = tmp_path_factory.mktemp("glue")
    results = Results(root)
    for enc in ("alibi", "rope"):
        for seed in (0, 1, 2):
            run = results.run(enc, seed)
            full = {task: (per_enc[enc][seed], chance) for task, (chance, per_enc) in FULL.items()}
            results.evaluate(run, glue_rows(full), scale=None, evaluator="glue",
                             settings={"battery": "offline", "steps": 300})
            kept = {t: full[t] for t in ("order", "rte")}
            results.evaluate(run, glue_rows(kept), scale=None, evaluator="glue",
                             settings={"battery": "offline", "steps": 300, "tasks": ["order", "rte"]})
    with connect_readonly(results.database()) as con:
        return build(con).glue


def test_the_tasks_at_chance_are_those_no_row_beats(boards):
    full = next(b for b in boards if "on order" not in b.title)
    assert tasks_at_chance(full) == ["qa_alignment"]
    assert any(n.startswith("At chance on this board: qa_alignment.") for n in full.notes)


def test_a_subset_setting_names_what_it_leaves_out_and_why(boards):
    subset = next(b for b in boards if "on order, rte" in b.title)
    full = next(b for b in boards if b is not subset)
    assert tasks_at_chance(subset) == []
    said = [n for n in subset.notes if n.startswith("This setting fine-tunes 2 of the 3 tasks")]
    assert len(said) == 1 and "qa_alignment (at chance there)" in said[0] and full.id in said[0]
    assert not any("This setting" in n for n in full.notes)  # the whole battery leaves nothing out
