"""Training batches for the synthetic tasks: whole batches of one length, loss on answers.

Each batch draws one length uniformly from [min_len, L] (Deletang et al. 2023 train
on every length up to L), so no padding is needed; targets are -100 (ignored by
cross entropy) on prompt bytes, so the model is trained to produce the answer, not
to model the random prompt.
"""

from __future__ import annotations

import random

import torch
from torch.utils.data import Dataset

from suite.data.synthetic import generate, get_task

IGNORE = -100


def example_tensors(prompt: str, answer: str, supervised: tuple[int, ...] = ()) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs [T], targets [T]) for one example of T + 1 bytes; targets only on answer bytes
    and on the prompt bytes at the offsets ``supervised`` (:attr:`Example.supervised`)."""
    data = (prompt + answer).encode()
    ids = torch.tensor(list(data), dtype=torch.long)
    targets = ids[1:].clone()
    targets[: len(prompt.encode()) - 1] = IGNORE  # predicting the random prompt is not the task
    for offset in supervised:  # ... but for the bytes it determines (ASCII: offsets are byte offsets)
        targets[offset - 1] = ids[offset]
    return ids[:-1], targets


class SyntheticBatches(Dataset):
    """``steps`` batches; batch i has one length drawn from a seeded stream."""

    def __init__(self, task: str, max_len: int, min_len: int, steps: int, batch_size: int, seed: int):
        self.task, self.batch_size, self.seed = task, batch_size, seed
        lo = max(min_len, get_task(task).min_length)
        if lo > max_len + 1:
            raise ValueError(f"task {task} needs sequences of at least {get_task(task).min_length} bytes; "
                             f"the training length is {max_len}")
        rng = random.Random(f"posbench.train/{task}/{seed}")
        # an example of n bytes gives n - 1 input positions; lengths are in input positions + 1
        self.lengths = [rng.randint(lo, max_len + 1) for _ in range(steps)]

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        examples = generate(self.task, self.batch_size, self.lengths[i], seed=self.seed * 1_000_003 + i)
        pairs = [example_tensors(e.prompt, e.answer, e.supervised) for e in examples]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


HELDOUT_EXAMPLES = 128  # examples of the learning curve's held-out probe
HELDOUT_SEED = 7_000_000_007  # far from every training batch's seed (seed * 1_000_003 + i) and the test seeds (run seeds)


class HeldOutExactMatch:
    """Exact match at the training length on held-out examples, from one forward pass: the
    model's argmax at every answer byte given the true prefix. Greedy decoding reproduces an
    answer exactly if and only if each of those argmaxes is right, so this is the figure the
    lm-eval battery computes at 1x, on other examples."""

    def __init__(self, task: str, length: int, n: int = HELDOUT_EXAMPLES, seed: int = HELDOUT_SEED):
        pairs = [example_tensors(e.prompt, e.answer) for e in generate(task, n, length, seed)]  # the answer alone, as lm-eval scores
        self.inputs = torch.stack([p[0] for p in pairs])
        self.targets = torch.stack([p[1] for p in pairs])

    def __call__(self, model) -> dict[str, float]:
        device = next(model.parameters()).device
        correct, loss = [], 0.0
        for x, y in zip(self.inputs.split(64), self.targets.split(64)):
            logits = model(x.to(device)).float().cpu()
            correct.append(((logits.argmax(-1) == y) | (y == IGNORE)).all(-1))
            loss += torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE,
                                                      reduction="sum").item()
        # heldout_loss: nats per answer byte, what a tuned grid chooses a learning rate on (suite.plan.tuning)
        return {"heldout_exact_match": torch.cat(correct).float().mean().item(),
                "heldout_loss": loss / (self.targets != IGNORE).sum().item()}
