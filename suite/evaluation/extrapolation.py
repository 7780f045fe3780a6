"""Length-extrapolation evaluation: bits per byte at s x L, and loss-vs-position curves.

For every scale s the held-out test split is cut into non-overlapping windows of
exactly ``eval_len = s * L`` inputs; each window predicts its next ``eval_len``
bytes, so every byte of the evaluated span is scored exactly once (windows share
no context). All scales score the *same* span, the first ``tokens`` bytes of the
test split rounded down to a multiple of the longest eval length, so figures at
different scales differ only in context length. The window policy is recorded
with every figure.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..model import Transformer

WINDOW_POLICY = "non-overlapping windows of exactly eval_len; every byte scored once; no carried context"
LN2 = math.log(2)


def evaluation_span(tokens: torch.Tensor, budget: int, longest: int) -> torch.Tensor:
    """The first ``n * longest + 1`` tokens with ``n * longest <= budget`` (at least one window)."""
    n = max(1, min(budget, len(tokens) - 1) // longest)
    if n * longest + 1 > len(tokens):
        raise ValueError(f"the test split ({len(tokens)} bytes) is shorter than one window of {longest}")
    return tokens[: n * longest + 1].long()


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


def position_curve(bits: torch.Tensor, buckets: int) -> list[dict]:
    """Mean bits by position bucket over all windows ([W, T] -> ``buckets`` rows)."""
    T = bits.shape[1]
    edges = torch.linspace(0, T, min(buckets, T) + 1).round().long().tolist()
    return [{"bucket": i, "pos_start": a, "pos_end": b, "value": bits[:, a:b].mean().item(), "n": bits[:, a:b].numel()}
            for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def evaluate_lm(model: Transformer, test_tokens: torch.Tensor, train_len: int, scales, tokens: int,
                batch_size: int, curve_buckets: int, task: str = "lm") -> tuple[list[dict], list[dict]]:
    """(metric rows, curve rows) for every scale; see the module docstring."""
    model.eval()
    span = evaluation_span(test_tokens, tokens, max(scales) * train_len)
    metrics, curves = [], []
    encoding = model.encodings[0]
    try:
        for s in scales:
            eval_len = s * train_len
            row = {"task": task, "metric": "bpb", "scale": s, "eval_len": eval_len, "window_policy": WINDOW_POLICY}
            limit = encoding.max_length()
            if limit is not None and eval_len > limit:  # e.g. a learned table has no rows there
                metrics.append({**row, "value": None, "stderr": None, "n": 0, "status": "not_applicable"})
                continue
            model.set_scale(s)
            bits = per_token_bits(model, span, eval_len, batch_size)
            per_window = bits.mean(dim=1)
            stderr = (per_window.std(unbiased=True) / math.sqrt(len(per_window))).item() if len(per_window) > 1 else None
            metrics.append({**row, "value": bits.mean().item(), "stderr": stderr, "n": bits.numel(), "status": "ok"})
            curves += [{"task": task, "scale": s, "eval_len": eval_len, **c} for c in position_curve(bits, curve_buckets)]
    finally:
        model.set_scale(1)
    return metrics, curves
