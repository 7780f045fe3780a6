"""Attention-sink strength: how much attention the first token draws, at s x L.

Gu et al. 2025 ("When Attention Sink Emerges in Language Models: An Empirical View", ICLR
2025, Sec. 3.1; code ``sail-sg/Attention-Sink`` at af49727, ``eval_sink_open_source.py``,
``compute_attention_sink``) score each key k of a window of T tokens by its mean attention over
the queries that see it,

    a_k^{l,h} = (1 / (T - k)) * sum_{t >= k} alpha_{t,k}^{l,h},

and define the sink rate of the first token as the share of (window, layer, head) whose score
a_0 exceeds epsilon = 0.3 (reported there in percent; a share here). This evaluator computes both
on windows of the task's held-out corpus at eval length s x L, with the weights the model really
uses (every layer forced onto the explicit attention path, which writes the softmax out:
:func:`suite.modeling.model.recorded_attention`):

* ``sink_rate``: the share of (window, layer, head) with a_0 > epsilon;
* ``sink_attention``: the mean of a_0 over them (how strong, not only how often).

Beyond the training length an encoding that keeps its sink (StreamingLLM's observation, Xiao et
al. 2024) and one that loses it differ where bits per byte may not. The windows are the first
``windows`` non-overlapping windows of the test split, the same for every encoding and seed.
"""

from __future__ import annotations

import torch
from pydantic import Field

from suite.evaluation.base import EvalContext, EvalResult, fits
from suite.evaluation.evaluators.extrapolation import evaluation_span
from suite.plan.evaluators import EVALUATORS, Evaluator, Settings
from suite.plan.task_kinds import kind_of
from suite.results.rows import MetricRow

WINDOW_POLICY = "the first non-overlapping windows of exactly eval_len of the test split; no carried context"


def key_scores(weights: torch.Tensor) -> torch.Tensor:
    """a_k: each key's attention summed over its queries, over how many queries see it
    (``compute_attention_sink``'s ``(scores / ratios).sum(dim=-2)``): [..., T, T] -> [..., T]."""
    T = weights.shape[-1]
    seen_by = torch.arange(T, 0, -1, dtype=weights.dtype, device=weights.device)  # T - k queries see key k
    return (weights / seen_by).sum(dim=-2)


def first_token_scores(model, windows: torch.Tensor, batch_size: int) -> torch.Tensor:
    """a_0 of every (window, layer, head): [W, L, H], from the weights of a no-grad forward."""
    from suite.modeling.model import AttentionPath, recorded_attention

    paths, chunk = list(model.paths), model.query_chunk
    model.path = AttentionPath.EXPLICIT  # the one path that writes the softmax out, exact for every encoding
    model.query_chunk = windows.shape[1]  # whole windows: a chunk of queries would split the square
    out = []
    try:
        with torch.no_grad():
            for i in range(0, len(windows), batch_size):
                with recorded_attention() as weights:
                    model(windows[i: i + batch_size])
                out.append(torch.stack([key_scores(w.float())[..., 0] for w in weights], dim=1))  # [b, L, H]
    finally:
        model.paths, model.query_chunk = paths, chunk
    return torch.cat(out)


class AttentionSinkSettings(Settings):
    windows: int = Field(16, gt=0, le=4096)  # windows of the test split at every scale
    batch_size: int = Field(4, gt=0)
    epsilon: float = Field(0.3, gt=0, lt=1)  # Gu et al.'s threshold on a_0


@EVALUATORS.register("attention_sinks")
class AttentionSinks(Evaluator):
    """The first token's attention-sink rate and strength on the held-out corpus at s x L."""

    Settings = AttentionSinkSettings

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        s, task, scale, eval_len = context.settings, context.task.name, context.evaluation.scale, context.eval_len
        if not kind_of(context.task).reads_corpus or not fits(model, eval_len):  # a generated task reads no corpus
            return EvalResult([MetricRow.not_applicable(task, m, scale, eval_len, window_policy=WINDOW_POLICY)
                               for m in ("sink_rate", "sink_attention")])
        from suite.data.corpus import load_corpus

        span = evaluation_span(load_corpus(context.task.corpus)["test"], s.windows * eval_len, eval_len)
        windows = span[:-1].view(-1, eval_len)[: s.windows]
        model.eval()
        model.set_scale(scale)
        try:
            a0 = first_token_scores(model, windows.to(next(model.parameters()).device), s.batch_size)  # [W, L, H]
        finally:
            model.set_scale(1)
        sinks = (a0 > s.epsilon).float()
        per_window = sinks.mean(dim=(1, 2))  # windows are the independent units: their spread is the stderr
        stderr = (per_window.std() / len(per_window) ** 0.5).item() if len(per_window) > 1 else None
        strength = a0.mean(dim=(1, 2))
        return EvalResult([
            MetricRow(task=task, metric="sink_rate", value=sinks.mean().item(), n=len(per_window), scale=scale,
                      eval_len=eval_len, stderr=stderr, window_policy=WINDOW_POLICY),
            MetricRow(task=task, metric="sink_attention", value=strength.mean().item(), n=len(strength), scale=scale,
                      eval_len=eval_len, window_policy=WINDOW_POLICY,
                      stderr=(strength.std() / len(strength) ** 0.5).item() if len(strength) > 1 else None),
        ])
