"""The keys and values a model keeps while it decodes one token at a time."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

@dataclass
class KVCache:
    """Keys (as ``rotate`` returned them) and values of every layer for the ``length``
    tokens read so far, for decoding one token at a time (see :meth:`Transformer.extend`)."""

    keys: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> [B, H, t, Dh]
    values: dict[int, torch.Tensor] = field(default_factory=dict)
    decays: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> [B, H, t] cumulative log forget values
    positions: torch.Tensor | None = None  # [t] position ids of the tokens held
    length: int = 0

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """This layer's keys and values with the new ones [B, H, Tn, Dh] after the held ones."""
        if layer in self.keys:
            k, v = torch.cat((self.keys[layer], k), dim=2), torch.cat((self.values[layer], v), dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def append_decay(self, layer: int, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The new tokens' cumulative log forget values [B, H, Tn] (summed from the sequence's
        start, continuing the held ones) and those of every token held, new ones included."""
        if layer in self.decays:
            c = c + self.decays[layer][..., -1:]
            self.decays[layer] = torch.cat((self.decays[layer], c), dim=-1)
        else:
            self.decays[layer] = c
        return c, self.decays[layer]
