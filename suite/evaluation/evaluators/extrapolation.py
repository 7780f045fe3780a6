"""Length-extrapolation evaluation: bits per byte at s x L, and loss-vs-position curves.

For every scale s the held-out test split is cut into non-overlapping windows of
exactly ``eval_len = s * L`` inputs; each window predicts its next ``eval_len``
bytes, so every byte of the evaluated span is scored exactly once (windows share
no context). Each scale is its own evaluation (adding a scale re-evaluates nothing
else), and each scores the first ``tokens`` bytes of the test split rounded down
to a multiple of its eval length; the grid checks that ``tokens`` is a multiple of
every eval length, so all scales score the *same* span and their figures differ
only in context length. The window policy is recorded with every figure.

**Passages** (``passages = P``, set by a grid's ``eval.passages``): instead of the first
``tokens`` bytes, P passages of ``tokens / P`` bytes each, at evenly spaced offsets across
the whole test split (:func:`evaluation_passages`). A contiguous span is one or two files of
the split, so its figure is a statement about that text; passages spread over the split
sample the corpus, and they are the unit of text sampling that the board's intervals resample
(suite.report.stats, "text sampling"): each passage's mean bits is written as a per-sample
row (suite.results.samples), and the figure is their mean (passages are of equal length). A
passage holds whole windows of every eval length, so every scale still scores the same bytes.
"""

from __future__ import annotations

import hashlib
import math

import pydantic
import torch
import torch.nn.functional as F
from pydantic import Field

from suite.modeling.model import Transformer
from suite.results.rows import CurveRow, MetricRow, SampleRow
from suite.evaluation.base import EvalContext, EvalResult, fits
from suite.plan.evaluators import EVALUATORS, Evaluator, Settings

WINDOW_POLICY = "non-overlapping windows of exactly eval_len; every byte scored once; no carried context"
PASSAGE_POLICY = ("evenly spaced passages of the test split, each cut into non-overlapping windows of exactly "
                  "eval_len; every byte of a passage scored once; no carried context")
LN2 = math.log(2)


def evaluation_span(tokens: torch.Tensor, budget: int, longest: int) -> torch.Tensor:
    """The first ``n * longest + 1`` tokens with ``n * longest <= budget`` (at least one window)."""
    n = max(1, min(budget, len(tokens) - 1) // longest)
    if n * longest + 1 > len(tokens):
        raise ValueError(f"the test split ({len(tokens)} bytes) is shorter than one window of {longest}")
    return tokens[: n * longest + 1].long()


def evaluation_passages(tokens: torch.Tensor, budget: int, passages: int, longest: int) -> torch.Tensor:
    """``passages`` spans of ``budget // passages`` inputs (+1 target) as [P, length + 1], at
    evenly spaced offsets from the split's start to its end; the length must hold whole
    windows of ``longest`` (the grid checks it)."""
    length = budget // passages
    if length < longest or length % longest:
        raise ValueError(f"a passage of {length} bytes ({budget} / {passages}) does not hold whole windows of {longest}")
    room = len(tokens) - (length + 1)
    if room < 0 or passages * length > len(tokens) - 1:
        raise ValueError(f"the test split ({len(tokens)} bytes) is shorter than {passages} passages of {length}")
    starts = [round(i * room / (passages - 1)) if passages > 1 else 0 for i in range(passages)]
    return torch.stack([tokens[a: a + length + 1] for a in starts]).long()


@torch.no_grad()
def per_token_bits(model: Transformer, span: torch.Tensor, eval_len: int, batch_size: int) -> torch.Tensor:
    """Bits for every target in ``span`` as [windows, eval_len]."""
    inputs = span[:-1].view(-1, eval_len)  # [W, T]
    targets = span[1:].view(-1, eval_len)
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(inputs), batch_size):
        x, y = inputs[i : i + batch_size].to(device), targets[i : i + batch_size].to(device)
        logits = model(x).float()  # [b, T, V]
        nll = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # [b, T]
        out.append((nll / LN2).cpu())
    return torch.cat(out)


def position_curve(bits: torch.Tensor, buckets: int, task: str, scale: int) -> list[CurveRow]:
    """Mean bits by position bucket over all windows ([W, T] -> ``buckets`` rows)."""
    T = bits.shape[1]
    edges = torch.linspace(0, T, min(buckets, T) + 1).round().long().tolist()
    return [CurveRow(task=task, scale=scale, eval_len=T, bucket=i, pos_start=a, pos_end=b,
                     value=bits[:, a:b].mean().item(), n=bits[:, a:b].numel())
            for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def evaluate_lm_at(model: Transformer, test_tokens: torch.Tensor, train_len: int, scale: int, tokens: int,
                   batch_size: int, curve_buckets: int, task: str = "lm") -> tuple[list[MetricRow], list[CurveRow]]:
    """(the bpb row, the curve rows) at one scale on the first ``tokens`` bytes; see the module docstring."""
    eval_len = scale * train_len
    if not fits(model, eval_len):
        return [MetricRow.not_applicable(task, "bpb", scale, eval_len, window_policy=WINDOW_POLICY)], []
    span = evaluation_span(test_tokens, tokens, eval_len)
    bits = _bits_at(model, [span], eval_len, batch_size, scale)
    per_window = bits.mean(dim=1)
    stderr = (per_window.std(unbiased=True) / math.sqrt(len(per_window))).item() if len(per_window) > 1 else None
    row = MetricRow(task=task, metric="bpb", value=bits.mean().item(), n=bits.numel(), scale=scale, eval_len=eval_len,
                    stderr=stderr, window_policy=WINDOW_POLICY)
    return [row], position_curve(bits, curve_buckets, task, scale)


def evaluate_passages_at(model: Transformer, test_tokens: torch.Tensor, train_len: int, scale: int, tokens: int,
                         passages: int, batch_size: int, curve_buckets: int,
                         task: str = "lm") -> tuple[list[MetricRow], list[CurveRow], list[SampleRow]]:
    """(the bpb row, the curve rows, one sample row per passage) at one scale on ``passages``
    evenly spaced passages; the row's stderr is the passages' (the unit text sampling resamples)."""
    eval_len = scale * train_len
    if not fits(model, eval_len):
        return [MetricRow.not_applicable(task, "bpb", scale, eval_len, window_policy=PASSAGE_POLICY)], [], []
    spans = evaluation_passages(test_tokens, tokens, passages, eval_len)
    bits = _bits_at(model, list(spans), eval_len, batch_size, scale)  # [P * windows per passage, eval_len]
    per_passage = bits.view(passages, -1).mean(dim=1)
    stderr = (per_passage.std(unbiased=True) / math.sqrt(passages)).item() if passages > 1 else None
    row = MetricRow(task=task, metric="bpb", value=bits.mean().item(), n=bits.numel(), scale=scale, eval_len=eval_len,
                    stderr=stderr, window_policy=PASSAGE_POLICY)
    samples = [SampleRow(task=task, scale=scale, eval_len=eval_len, metric="bpb", doc_id=i,
                         prompt_hash=hashlib.sha256(span.numpy().tobytes()).hexdigest(), target="",
                         correct=value) for i, (span, value) in enumerate(zip(spans, per_passage.tolist()))]
    return [row], position_curve(bits, curve_buckets, task, scale), samples


def _bits_at(model: Transformer, spans: list[torch.Tensor], eval_len: int, batch_size: int, scale: int) -> torch.Tensor:
    """Bits of every target of every span (each of n * eval_len + 1 tokens) at ``scale``, as [windows, eval_len]."""
    model.eval()
    model.set_scale(scale)
    try:
        return torch.cat([per_token_bits(model, span, eval_len, batch_size) for span in spans])
    finally:
        model.set_scale(1)


def evaluate_lm(model: Transformer, test_tokens: torch.Tensor, train_len: int, scales, tokens: int,
                batch_size: int, curve_buckets: int, task: str = "lm") -> tuple[list[MetricRow], list[CurveRow]]:
    """:func:`evaluate_lm_at` at every scale of ``scales``."""
    metrics, curves = [], []
    for s in scales:
        m, c = evaluate_lm_at(model, test_tokens, train_len, s, tokens, batch_size, curve_buckets, task)
        metrics += m
        curves += c
    return metrics, curves


class ExtrapolationSettings(Settings):
    tokens: int = Field(32768, gt=0)  # bytes scored at every scale: the same span for all
    batch_size: int = Field(8, gt=0)
    curve_buckets: int = Field(32, gt=0)  # position buckets of the loss-vs-position curve
    passages: int | None = Field(None, gt=0, le=4096)  # None: the first `tokens` bytes; P: P evenly spaced passages

    @pydantic.model_serializer(mode="wrap")
    def _without_unset_passages(self, handler):
        # settings are part of every evaluation id: the first-bytes design keeps the ids it had
        data = handler(self)
        if data.get("passages") is None:
            data.pop("passages", None)
        return data


@EVALUATORS.register("extrapolation")
class Extrapolation(Evaluator):
    """Bits per byte of the task's held-out corpus at eval length s x L, with curves."""

    Settings = ExtrapolationSettings

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        from suite.data.corpus import load_corpus

        s = context.settings
        test = load_corpus(context.task.corpus)["test"]
        if s.passages is not None:
            metrics, curves, samples = evaluate_passages_at(model, test, context.train_len, context.evaluation.scale,
                                                            s.tokens, s.passages, s.batch_size, s.curve_buckets,
                                                            task=context.task.name)
            return EvalResult(metrics, curves, samples=samples)
        metrics, curves = evaluate_lm_at(model, test, context.train_len, context.evaluation.scale, s.tokens,
                                         s.batch_size, s.curve_buckets, task=context.task.name)
        return EvalResult(metrics, curves)
