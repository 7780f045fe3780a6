"""What the site says about the run as a whole: the header (sizes and parameter counts,
training recipes, seeds, commits, dates) and the GLUE-style battery's documentation."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from suite.report.figures import _dicts

# the task kinds (suite.plan.task_kinds) whose runs read a corpus: the header names those corpora
CORPUS_TASK_KINDS = frozenset({"lm"})


@dataclass(frozen=True)
class SizeLine:
    name: str
    shape: str  # "2 layers, width 64, 4 heads"
    params: str  # "101,504" or "101,504 to 109,696" (encodings differ)


@dataclass(frozen=True)
class RecipeLine:
    tasks: list[str]
    seq_len: int | None
    steps: int | None
    batch_size: int | None
    tokens: int | None
    lr: float | None


# what a size's ``init`` (suite.modeling.init.INIT_SCHEMES) means, in the header's words
INIT_WORDS = {"gpt2": "GPT-2's initialisation (std 0.02, tied output head)",
              "pytorch": "PyTorch's default initialisation (untied output head)"}


def header(con, runs: dict[str, dict]) -> dict:
    """The facts that state the run at the top of every page."""
    sizes: dict[str, list[dict]] = defaultdict(list)
    recipes: dict = defaultdict(set)
    for r in runs.values():
        sizes[r["size"]].append(r)
        recipes[r["recipe"]].add(r["task"])
    size_lines = []
    for name, rows in sorted(sizes.items()):
        spec = rows[0]["size_spec"]
        shape = ", ".join(f"{spec[k]} {label}" for k, label in (("n_layers", "layers"), ("d_model", "wide"),
                                                                   ("n_heads", "heads")) if spec.get(k) is not None)
        if spec.get("init") in INIT_WORDS:  # "torchinit" in a size's name means this: say it
            shape += f", {INIT_WORDS[spec['init']]}"
        counts = sorted({r["n_params"] for r in rows if r["n_params"] is not None})
        params = "unknown" if not counts else f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
        size_lines.append(SizeLine(name, shape, params))
    recipe_lines = [RecipeLine(sorted(tasks), r.seq_len, r.steps, r.batch_size, r.tokens, r.lr)
                    for r, tasks in sorted(recipes.items(), key=lambda kv: (sorted(kv[1]), kv[0].label))]
    seeds = sorted({r["seed"] for r in runs.values() if r["seed"] is not None})
    corpora = sorted({r["corpus"] for r in runs.values() if r["corpus"] and r["kind"] in CORPUS_TASK_KINDS})
    commits = sorted({r["git_commit"] for r in runs.values() if r["git_commit"]})
    dates = [d for d in (r["finished_at"] for r in runs.values()) if d]
    dates += [r["finished_at"] for r in _dicts(con, "SELECT finished_at FROM evaluations WHERE finished_at IS NOT NULL")]
    counts = _dicts(con, """SELECT (SELECT count(*) FROM runs WHERE status = 'done') AS runs_done,
                                   (SELECT count(*) FROM runs WHERE status = 'failed') AS runs_failed,
                                   (SELECT count(*) FROM evaluations WHERE status = 'done') AS evals_done,
                                   (SELECT count(*) FROM evaluations WHERE status = 'failed') AS evals_failed,
                                   (SELECT count(DISTINCT encoding) FROM evaluations) AS encodings""")[0]
    return {"sizes": size_lines, "recipes": recipe_lines, "seeds": seeds, "commits": commits, "corpora": corpora,
            "first": min(dates)[:10] if dates else None, "last": max(dates)[:10] if dates else None, **counts}


# -- the GLUE-style battery --------------------------------------------------------------------------------------

def glue_battery(con) -> tuple[list[dict], dict[str, float | None]]:
    """(one documentation row per GLUE-style task evaluated, task -> chance level of its score)."""
    figures = _dicts(con, """SELECT m.task, min(m.n) AS n_min, max(m.n) AS n_max, any_value(m.source) AS source,
                                    any_value(m.chance) AS chance
                             FROM metrics m JOIN evaluations e USING (eval_id)
                             WHERE e.checkpoint_level AND m.metric = 'score' AND m.task LIKE 'glue/%'
                             GROUP BY m.task ORDER BY m.task""")
    if not figures:
        return [], {}
    batteries = {json.loads(s or "{}").get("battery", "offline") for (s,) in
                 con.execute("SELECT DISTINCT settings FROM evaluations WHERE checkpoint_level").fetchall()}
    offline = _offline_tasks() if "offline" in batteries else {}
    rows, chances = [], {}
    for f in figures:
        name = f["task"].split("/", 1)[1]
        task = offline.get(name)
        chances[name] = chance = f["chance"]  # the evaluator's uniform-guess score, where labels are balanced
        n = f"{f['n_min']}" if f["n_min"] == f["n_max"] else f"{f['n_min']} to {f['n_max']}"
        rows.append({"name": name, "analogue": task.glue_analogue if task else name.upper(),
                     "built": task.description if task else "the real GLUE task's dev split",
                     "kind": task.kind if task else None, "labels": task.num_labels if task else None,
                     "metrics": ", ".join(task.metrics) if task else None, "n": n, "chance": chance,
                     "source": f["source"]})
    return rows, chances


def _offline_tasks() -> dict:
    """The offline battery's task metadata. Imported only when a GLUE-style figure is shown:
    the module is pure, but its package (suite.evaluation) imports torch."""
    from suite.data.glue_tasks import TASKS

    return TASKS
