"""Training windows of a token stream, and the validation loss on fixed windows of another."""

from __future__ import annotations

import torch
from torch.utils.data import Dataset


class RandomWindows(Dataset):
    """``n`` windows of ``length + 1`` tokens at offsets drawn once from ``seed``."""

    def __init__(self, tokens: torch.Tensor, length: int, n: int, seed: int):
        self.tokens, self.length = tokens, length
        gen = torch.Generator().manual_seed(seed)
        self.offsets = torch.randint(0, len(tokens) - length - 1, (n,), generator=gen)

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        window = self.tokens[self.offsets[i] : self.offsets[i] + self.length + 1].long()
        return window[:-1], window[1:]


# windows a learning curve's val_loss is the mean over, evenly spaced over the validation split:
# benchmarks/measure_validation_text.py found the split's first 32 (2 KB, one file) choosing NoPE's
# rate wrongly on the size ladder's tiny sweep, where every sample of 32 spread over the split chose
# every encoding's rate as the whole split does (docs/concepts/boards.md, "Text sampling")
VALIDATION_WINDOWS = 32


class ValidationLoss:
    """Language modelling's learning-curve probe (suite.plan.task_kinds): the mean next-byte loss
    (nats per byte) at the training length on ``n`` windows evenly spaced from the start to the
    end of the validation split, which no training batch and no test window holds. A tuned grid
    chooses each encoding's learning rate on it (suite.plan.tuning), never on a test figure.
    (Until 2026-11-27 it read the split's first 32 windows: CHANGELOG.md.)"""

    def __init__(self, tokens: torch.Tensor, length: int, n: int = VALIDATION_WINDOWS):
        n = min(n, (len(tokens) - 1) // length)
        if n < 1:
            raise ValueError(f"the validation split ({len(tokens)} bytes) holds no window of {length + 1}")
        room = len(tokens) - (length + 1)
        starts = [round(i * room / (n - 1)) if n > 1 else 0 for i in range(n)]
        spans = torch.stack([tokens[a: a + length + 1] for a in starts]).long()
        self.inputs = spans[:, :-1]  # [n, L]
        self.targets = spans[:, 1:]

    def __call__(self, model) -> dict[str, float]:
        device = next(model.parameters()).device
        total = 0.0
        for x, y in zip(self.inputs.split(16), self.targets.split(16)):
            logits = model(x.to(device)).float()
            total += torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.to(device).flatten(), reduction="sum").item()
        return {"val_loss": total / self.targets.numel()}
