"""Training windows of a token stream."""

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
