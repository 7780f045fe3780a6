"""Length-generalization tasks and LM extrapolation evaluated through lm-eval, and the summaries.

For every scale ``s`` (and always ``s = 1``, the training length, so extrapolation
is read against in-distribution skill) the suite generates each task's examples at
exactly ``s x L`` bytes (:func:`suite.data.synthetic.generate`), writes them to a
JSONL file under a work directory, writes a concrete lm-eval task config that
includes a template from ``tasks/lmeval/`` with the file's *absolute* path (lm-eval
resolves relative ``data_files`` against the working directory), and runs
``lm_eval.simple_evaluate`` with :class:`suite.evaluation.lmeval_adapter.PosBenchLM` at that eval
length. lm-eval computes and aggregates every figure; the rows here are what it
returns, in PosBench's long form::

    {"task", "metric", "scale", "eval_len", "value", "stderr", "n", "status",
     "window_policy", "source"}

``status`` is ``"ok"`` or ``"not_applicable"`` (the encoding cannot represent the
eval length: value and stderr None, n 0); ``source`` names lm-eval's version, the
task with its generator version, and the template with its version.

Work directory layout (everything lm-eval reads is under it; it can be deleted)::

    <workdir>/data/<task>-v<version>-len<L>-n<n>-seed<seed>.jsonl   generated examples
    <workdir>/data/span-<sha>.jsonl                               a byte span (rolling LM)
    <workdir>/tasks/<task name>.yaml                              concrete lm-eval configs
    <workdir>/hf_cache/                                           the datasets cache

Each task config can be rerun by hand, after ``import suite.evaluation.lmeval_adapter`` (which
registers the model ``posbench``)::

    lm_eval.simple_evaluate(model="posbench", model_args="checkpoint=<ckpt>,eval_len=<s x L>",
                            tasks=[<name>], task_manager=TaskManager(include_path="<workdir>/tasks"))

Passkey is also reported per depth decile (``BREAKDOWNS``): lm-eval's per-sample
results (``log_samples``) grouped by the example's ``meta["depth"]`` and aggregated
with lm-eval's own ``mean`` / ``mean_stderr``, as rows ``acc_depth0`` .. ``acc_depth9``.
One task per decile would give the same numbers with ten times the lm-eval runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import torch
import yaml

from suite.data.synthetic import get_task, generate
from suite.evaluation.evaluators.extrapolation import evaluation_span
from suite.evaluation.lmeval_adapter import POLICY, PosBenchLM, bytes_as_latin1
from suite.modeling.model import Transformer
from suite.results.rows import MetricRow, SampleRow
from suite.evaluation.base import fits

TEMPLATES = Path(__file__).resolve().parents[2] / "tasks" / "lmeval"
BREAKDOWNS: Mapping[str, str] = {"passkey": "depth"}
"""Tasks whose accuracy is also reported per value of an example's meta field:
metric ``acc_<field><value>``, e.g. passkey ``acc_depth3`` (needle in the 4th decile)."""


def lm_eval_version() -> str:
    return metadata.version("lm_eval")


class _TemplateLoader(yaml.SafeLoader):
    """Reads a template's own keys; lm-eval's ``!function`` tags stay strings."""


_TemplateLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def template_version(template: str, templates: Path = TEMPLATES) -> int:
    return yaml.load((templates / f"{template}.yaml").read_text(), Loader=_TemplateLoader)["metadata"]["version"]


# -- data files and concrete configs --------------------------------------------------


def write_jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=True) + "\n")
    tmp.replace(path)
    return path


def write_task_data(task: str, length: int, n: int, seed: int, workdir: Path) -> Path:
    """``n`` examples of exactly ``length`` bytes as JSONL: ``{"prompt", "answer", **meta}``."""
    version = get_task(task).version
    path = Path(workdir).resolve() / "data" / f"{task}-v{version}-len{length}-n{n}-seed{seed}.jsonl"
    return write_jsonl(path, ({"prompt": ex.prompt, "answer": ex.answer, **ex.meta}
                              for ex in generate(task, n, length, seed)))


def write_config(name: str, template: str, data: Path, workdir: Path, version, templates: Path = TEMPLATES,
                 **extra) -> str:
    """A concrete lm-eval task ``name``: ``template`` over the JSONL file ``data`` (absolute)."""
    workdir = Path(workdir).resolve()
    config = {"include": str((templates / f"{template}.yaml").resolve()), "task": name,
              "dataset_kwargs": {"data_files": {"test": str(Path(data).resolve())},
                                 "cache_dir": str(workdir / "hf_cache")},
              "metadata": {"version": version}, **extra}
    path = workdir / "tasks" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return name


def write_task_config(task: str, length: int, n: int, seed: int, workdir: Path,
                      template: str = "posbench_synthetic", templates: Path = TEMPLATES) -> str:
    """Generate ``task`` at ``length`` and write its lm-eval config; returns the lm-eval task name.

    ``template`` is ``posbench_synthetic`` (log-likelihood, acc via the greedy flag) or
    ``posbench_synthetic_generate`` (greedy generation, exact_match).
    """
    data = write_task_data(task, length, n, seed, workdir)
    extra = {}
    if template == "posbench_synthetic_generate":  # room for the whole answer, and no more
        answer_len = len(json.loads(data.read_text().partition("\n")[0])["answer"].encode())
        extra["generation_kwargs"] = {"until": ["\n"], "do_sample": False, "max_gen_toks": answer_len}
    return write_config(f"{template}_{task}_len{length}", template, data, workdir, get_task(task).version,
                        templates, **extra)


def write_rolling_config(span: bytes, workdir: Path, templates: Path = TEMPLATES) -> str:
    """One document holding ``span`` (bytes) for the rolling-log-likelihood template."""
    sha = hashlib.sha256(span).hexdigest()[:16]
    data = write_jsonl(Path(workdir).resolve() / "data" / f"span-{sha}.jsonl", [{"bytes_latin1": bytes_as_latin1(span)}])
    return write_config(f"posbench_rolling_{sha}", "posbench_rolling", data, workdir,
                        template_version("posbench_rolling", templates), templates)


def run_lm_eval(lm: PosBenchLM, names: list[str], workdir: Path, log_samples: bool = True) -> dict:
    """``lm_eval.simple_evaluate`` over the concrete configs ``names`` in ``workdir/tasks`` (offline).

    ``log_samples`` keeps lm-eval's per-sample results (``results["samples"]``); lm-eval
    hashes each prompt as UTF-8 there, so it must be off for text that is not UTF-8.
    """
    import lm_eval
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(Path(workdir).resolve() / "tasks"), include_defaults=False)
    # lm-eval draws a progress bar per task and scale and probes for a git repository;
    # in a grid of hundreds of such calls that buries PosBench's own progress. Its
    # stderr is kept and shown only when the call fails.
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            # Zero-shot, greedy, no sampling: nothing is random, so lm-eval need not reseed the caller's RNGs.
            return lm_eval.simple_evaluate(model=lm, tasks=names, task_manager=manager, log_samples=log_samples,
                                           bootstrap_iters=1000, random_seed=None, numpy_random_seed=None,
                                           torch_random_seed=None)
    except BaseException:
        sys.stderr.write(captured.getvalue())
        raise


# -- rows -------------------------------------------------------------------------------


def _number(x) -> float | None:
    return None if x is None or isinstance(x, str) else float(x)  # lm-eval writes "N/A" for no stderr


def task_rows(results: dict, task: str, name: str, metric: str, scale: int, eval_len: int, policy: str,
              source: str, breakdown: str | None = None) -> list[MetricRow]:
    """lm-eval's figure for ``metric`` of ``name`` as a row, plus one per ``breakdown`` value.

    A breakdown row aggregates lm-eval's per-sample ``metric`` values of the examples
    with that meta value, with lm-eval's own ``mean`` and ``mean_stderr``.
    """
    from lm_eval.api.metrics import mean, mean_stderr

    base = {"task": task, "scale": scale, "eval_len": eval_len, "window_policy": policy, "source": source,
            "chance": get_task(task).chance}
    figures = results["results"][name]
    rows = [MetricRow(**base, metric=metric, value=_number(figures[f"{metric},none"]),
                      stderr=_number(figures.get(f"{metric}_stderr,none")), n=results["n-samples"][name]["effective"])]
    if breakdown:
        groups: dict = {}
        for sample in results["samples"][name]:
            groups.setdefault(sample["doc"][breakdown], []).append(sample[metric])
        for key in sorted(groups):
            values = groups[key]
            rows.append(MetricRow(**base, metric=f"{metric}_{breakdown}{key}", value=mean(values),
                                  stderr=mean_stderr(values) if len(values) > 1 else None, n=len(values)))
    return rows


def sample_rows(results: dict, task: str, name: str, metric: str, scale: int, eval_len: int,
                breakdown: str | None = None) -> list[SampleRow]:
    """lm-eval's logged samples of ``name`` as rows: each example's prompt hash (lm-eval's),
    target, the model's response (a log-likelihood template's log-probability, a generation
    template's text) and its per-sample ``metric``, in lm-eval's order."""
    rows = []
    for sample in results["samples"][name]:
        response = sample["filtered_resps"][0]
        logprob, output = (float(response[0]), None) if isinstance(response, (list, tuple)) else (None, str(response))
        rows.append(SampleRow(task=task, scale=scale, eval_len=eval_len, metric=metric, doc_id=int(sample["doc_id"]),
                              prompt_hash=sample["prompt_hash"], target=str(sample["target"]),
                              correct=float(sample[metric]), logprob=logprob, output=output, breakdown=breakdown,
                              breakdown_value=None if breakdown is None else str(sample["doc"][breakdown])))
    return rows


def evaluate_tasks(model: Transformer, train_len: int, tasks: list[str], scales: list[int], n: int, seed: int,
                   workdir: Path, batch_size: int, template: str = "posbench_synthetic",
                   breakdowns: Mapping[str, str] = BREAKDOWNS, samples: list[SampleRow] | None = None) -> list[MetricRow]:
    """Every task at every scale of ``scales`` through lm-eval; see the module docstring for the rows.

    ``tasks`` are generator names (:data:`suite.data.synthetic.TASKS`), also the rows'
    ``task``. Each scale is one ``simple_evaluate`` of all tasks with the adapter at
    ``s x train_len``; examples are ``generate(task, n, s x train_len, seed)``. Rows per
    task and scale: ``acc`` (``exact_match`` with the generation template) and, for a
    task in ``breakdowns``, one row per value of its meta field that occurs in the
    examples (a decile without examples has no row; a not-applicable scale has only
    the main metric's row). Where ``samples`` is a list, every example's outcome is
    appended to it (:func:`sample_rows`).
    """
    metric, request = {"posbench_synthetic": ("acc", "loglikelihood"),
                       "posbench_synthetic_generate": ("exact_match", "generate_until")}[template]
    too_short = [f"{t} needs length >= {get_task(t).min_length}" for t in tasks if get_task(t).min_length > train_len]
    if too_short:  # before anything runs: the grid evaluates every task at the training length too
        raise ValueError(f"training length {train_len} is too short: {'; '.join(too_short)}")
    versions = {task: get_task(task).version for task in tasks}
    source = {task: f"lm-eval {lm_eval_version()}; {task} v{versions[task]}; {template}.yaml "
                    f"v{template_version(template)}" for task in tasks}
    rows = []
    for s in scales:
        eval_len = s * train_len
        if not fits(model, eval_len):
            rows += [MetricRow.not_applicable(t, metric, s, eval_len, window_policy=POLICY[request], source=source[t],
                                              chance=get_task(t).chance) for t in tasks]
            continue
        lm = PosBenchLM(model, train_len, eval_len=eval_len, batch_size=batch_size)
        names = {t: write_task_config(t, eval_len, n, seed, workdir, template) for t in tasks}
        results = run_lm_eval(lm, list(names.values()), workdir)
        for t, name in names.items():
            rows += task_rows(results, t, name, metric, s, eval_len, POLICY[request], source[t], breakdowns.get(t))
            if samples is not None:
                samples += sample_rows(results, t, name, metric, s, eval_len, breakdowns.get(t))
    return rows


def evaluate_lm_rolling(model: Transformer, train_len: int, source: Path | str | bytes | torch.Tensor,
                        scales: list[int], tokens: int, workdir: Path, batch_size: int, task: str = "lm",
                        metric: str = "bpb_lmeval") -> list[MetricRow]:
    """Bits per byte (recorded as ``metric``) at every scale by lm-eval's rolling log-likelihood.

    ``source`` is a text file (its bytes), bytes, or a token tensor (e.g. a corpus's test
    split). At each scale the span is :func:`suite.evaluation.evaluators.extrapolation.evaluation_span` of it,
    as the direct evaluator takes it (the first ``k * s * L + 1`` bytes, ``k`` whole windows
    within the ``tokens`` budget), so on the same arguments the figures equal
    :func:`suite.evaluation.evaluators.extrapolation.evaluate_lm`'s ``bpb``. lm-eval reports no stderr for
    bits_per_byte; ``n`` is the number of bytes scored.
    """
    if isinstance(source, (str, Path)):
        source = Path(source).read_bytes()
    data = torch.tensor(list(source), dtype=torch.long) if isinstance(source, bytes) else source
    src = f"lm-eval {lm_eval_version()}; posbench_rolling.yaml v{template_version('posbench_rolling')}"
    rows = []
    for s in scales:
        eval_len = s * train_len
        if not fits(model, eval_len):
            rows.append(MetricRow.not_applicable(task, metric, s, eval_len, window_policy=POLICY["loglikelihood_rolling"],
                                                source=src))
            continue
        span = bytes(evaluation_span(data, tokens, eval_len).tolist())  # the span the direct evaluator scores
        name = write_rolling_config(span, workdir)
        lm = PosBenchLM(model, train_len, eval_len=eval_len, batch_size=batch_size)
        results = run_lm_eval(lm, [name], workdir, log_samples=False)  # a span may be any bytes
        rows.append(MetricRow(task=task, metric=metric, scale=s, eval_len=eval_len,
                              value=_number(results["results"][name]["bits_per_byte,none"]), n=len(span) - 1,
                              window_policy=POLICY["loglikelihood_rolling"], source=src))
    return rows
