"""Byte-level tokenization: every byte is a token, so the vocabulary is 256 symbols
and bits per token are bits per byte."""

from __future__ import annotations

import torch

VOCAB_SIZE = 256


def encode(text: str | bytes) -> torch.Tensor:
    """UTF-8 bytes of ``text`` as a 1-D int64 tensor."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return torch.tensor(list(data), dtype=torch.long)


def decode(ids) -> str:
    """Inverse of :func:`encode`; invalid UTF-8 (a cut multi-byte char) becomes U+FFFD."""
    return bytes(int(i) for i in ids).decode("utf-8", errors="replace")
