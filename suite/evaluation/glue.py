"""GLUE-style scores: fine-tune a trained backbone on short tasks.

The protocol (Su et al. 2021 report GLUE fine-tuning beside language modelling for
RoFormer; FIRE and YaRN report short-task scores beside long-context ones): copy the
pretrained backbone, put a small linear head on the hidden state of the *last* input
byte (the only position that has seen the whole input in a causal model), fine-tune
everything for a fixed number of steps with one recipe for every encoding, and score
the dev split with GLUE's metrics. The battery's score is the unweighted mean of the
task scores, as GLUE's.

Batches are right-padded: causal attention means padding after the last real byte
cannot change its hidden state, and every input starts at position 0, so an encoding
sees exactly the positions it would see unpadded.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader

from suite.core.runtime import warmup_cosine
from suite.data.batteries import battery_of
from suite.data.glue_tasks import input_text
from suite.evaluation import glue_metrics
from suite.modeling.model import Transformer
from suite.results.rows import MetricRow
from suite.specs import GlueRecipe
from suite.training.trainer import make_trainer

PAD = 0  # NUL: never part of a task's printable-ASCII text


def encode_batch(texts: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded byte ids [B, T] and lengths [B] (each text cut to its last max_len bytes)."""
    data = [t.encode("utf-8")[-max_len:] or b"\x00" for t in texts]
    T = max(len(d) for d in data)
    ids = torch.full((len(data), T), PAD, dtype=torch.long)
    for i, d in enumerate(data):
        ids[i, : len(d)] = torch.tensor(list(d), dtype=torch.long)
    return ids, torch.tensor([len(d) for d in data])


class SequenceHead(L.LightningModule):
    """Backbone + a linear head on the last real position; cross entropy or MSE."""

    def __init__(self, backbone: Transformer, num_labels: int, regression: bool, recipe: GlueRecipe):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(backbone.cfg.d_model, num_labels)
        self.regression, self.recipe = regression, recipe

    def forward(self, ids, lengths):
        h = self.backbone.features(ids)  # [B, T, D]
        last = h[torch.arange(len(ids), device=ids.device), lengths - 1]  # [B, D]
        out = self.head(last)
        return out.squeeze(-1) if self.regression else out

    def training_step(self, batch, _):
        ids, lengths, labels = batch
        out = self(ids, lengths)
        loss = F.mse_loss(out.float(), labels.float()) if self.regression else F.cross_entropy(out.float(), labels.long())
        return loss

    def configure_optimizers(self):
        r = self.recipe
        opt = torch.optim.AdamW(self.parameters(), lr=r.lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, max(1, r.steps // 10), r.steps))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def _loader(examples, recipe: GlueRecipe, seed: int) -> DataLoader:
    def collate(batch):
        ids, lengths = encode_batch([input_text(e) for e in batch], recipe.max_len)
        return ids, lengths, torch.tensor([e.label for e in batch])

    # enough shuffled epochs for `steps` batches; the generator makes the order a function of the seed
    sampler = torch.utils.data.RandomSampler(examples, replacement=True, num_samples=recipe.steps * recipe.batch_size,
                                             generator=torch.Generator().manual_seed(seed))
    return DataLoader(examples, batch_size=recipe.batch_size, sampler=sampler, collate_fn=collate)


@torch.no_grad()
def predict(module: SequenceHead, examples, recipe: GlueRecipe) -> list:
    module.eval()
    out = []
    for i in range(0, len(examples), 128):
        ids, lengths = encode_batch([input_text(e) for e in examples[i : i + 128]], recipe.max_len)
        y = module(ids.to(module.device), lengths.to(module.device)).float().cpu()
        out += y.tolist() if module.regression else y.argmax(-1).tolist()
    return out


@dataclass(frozen=True)
class TaskResult:
    task: str
    values: dict[str, float]  # metric -> value on dev
    score: float  # GLUE's task score: the mean of its metrics
    n_dev: int
    version: int


def finetune_task(backbone: Transformer, task, train, dev, recipe: GlueRecipe, seed: int) -> TaskResult:
    """Fine-tune a copy of ``backbone`` on ``train``; score ``dev`` with the task's metrics."""
    L.seed_everything(seed, verbose=False)
    module = SequenceHead(copy.deepcopy(backbone), task.num_labels, task.regression, recipe).train()
    trainer = make_trainer(recipe.steps, gradient_clip_val=1.0)
    trainer.fit(module, _loader(train, recipe, seed))
    predictions = predict(module, dev, recipe)
    values = glue_metrics.compute_task(task, predictions, [e.label for e in dev])
    return TaskResult(task.name, values, glue_metrics.task_score(task, values), len(dev), getattr(task, "version", 1))


def evaluate_glue(backbone: Transformer, recipe: GlueRecipe, seed: int, log=print) -> list[MetricRow]:
    """Metric rows for every task of the battery plus the macro average.

    A real-GLUE task whose data is not on this machine is skipped with a message,
    never failed: its rows say ``status: skipped`` with the reason.
    """
    rows, scores, score_chances = [], {}, {}
    limit = backbone.encodings[0].max_length()
    cut = ""
    if limit is not None and limit < recipe.max_len:
        # an encoding with a bounded table (learned) reads only its last `limit` bytes: stated, not silent
        recipe, cut = recipe.model_copy(update={"max_len": limit}), f"; inputs cut to the encoding's {limit} positions"
    battery = battery_of(recipe)
    skippable = battery.unavailable()
    for name in recipe.task_names():
        prefix = f"glue/{name}"
        try:
            task, train, dev = battery.load(name, recipe, seed)
        except skippable as exc:
            log(f"  glue {name}: skipped ({exc})")
            rows.append(_row(prefix, "score", None, 0, "skipped", f"{recipe.battery}: {exc}"))
            continue
        result = finetune_task(backbone, task, train, dev, recipe, seed)
        source = f"{recipe.battery} battery; {name} v{result.version}; {recipe.steps} steps x {recipe.batch_size}{cut}"
        chances = {metric: metric_chance(task, metric) if battery.balanced else None for metric in result.values}
        rows += [_row(prefix, metric, value, result.n_dev, "ok", source, chances[metric])
                 for metric, value in result.values.items()]
        task_chance = None if None in chances.values() else sum(chances.values()) / len(chances)
        rows.append(_row(prefix, "score", result.score, result.n_dev, "ok", source, task_chance))
        scores[name], score_chances[name] = result.score, task_chance
    if scores:
        complete = len(scores) == len(recipe.task_names())
        chance = None if None in score_chances.values() else glue_metrics.macro_average(score_chances)
        rows.append(_row("glue", "glue_score", glue_metrics.macro_average(scores), len(scores),
                         "ok" if complete else "partial", f"{recipe.battery} battery; mean of {len(scores)} task scores", chance))
    return rows


def metric_chance(task, metric: str) -> float | None:
    """A uniform guesser's expected score on a task whose labels are balanced (every task
    of both batteries balances ``label_values``): accuracy 1/k and binary F1 1/2 (precision
    and recall both 1/2), no correlation (Matthews, Pearson, Spearman) 0."""
    if metric == "accuracy":
        return 1 / task.num_labels
    if metric == "f1" and task.num_labels == 2:
        return 0.5
    return 0.0 if metric in ("matthews", "pearson", "spearman") else None


def _row(task: str, metric: str, value, n: int, status: str, source: str, chance: float | None = None) -> MetricRow:
    return MetricRow(task=task, metric=metric, value=value, n=n, status=status, source=source, chance=chance)
