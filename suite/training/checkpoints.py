"""Checkpoints: written atomically, read back as the run's module, and reused for the
encodings evaluated on them (training-free variants load the weights they were trained with)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import lightning as L
import torch

from suite.modeling.build import build_model, run_model_config
from suite.modeling.model import Transformer
from suite.plan.grid import TrainingRun, encoding_content
from suite.specs import EncodingSpec
from suite.training.module import LanguageModel


def resume_dir(checkpoint_dir: Path, run: TrainingRun) -> Path:
    """Where Lightning writes a run's hpc checkpoints: results/hpc/<run_id>/."""
    return checkpoint_dir.parent / "hpc" / run.run_id


def save_atomically(trainer: L.Trainer, checkpoint: Path, partial: Path | None = None, durable: bool = False) -> None:
    """Written beside (as ``partial``, by default a ``.tmp-`` name) and renamed, so a killed
    process never leaves half a checkpoint. ``durable``: the file's bytes, then its name, on disk
    before this returns (fsync of the file and of its folder), so a machine that loses power
    right after still has it whole."""
    tmp = partial or checkpoint.with_name(f".tmp-{os.getpid()}-{checkpoint.name}")
    try:
        trainer.save_checkpoint(tmp)  # collective under DDP: every rank calls it, rank 0 writes
        if trainer.is_global_zero:
            if durable:
                _fsync(tmp)
            os.replace(tmp, checkpoint)
            if durable:
                _fsync(checkpoint.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def model_for(evaluation_encoding: EncodingSpec, trained: LanguageModel) -> Transformer:
    """The trained weights in a model with the encoding as evaluated (a training-free
    variant on the checkpoint it trains as); strict: every weight must fit."""
    run = trained.run
    if encoding_content(evaluation_encoding) == encoding_content(run.encoding):
        return trained.model
    model = build_model(evaluation_encoding, run_model_config(run))
    model.load_state_dict(trained.model.state_dict(), strict=True)
    return model.eval()


def weights_sha256(model: torch.nn.Module) -> str:
    """The sha256 of a model's trained weights: every entry of its state dict, in order, by name,
    dtype, shape and bytes. Two trainings of one run give the same digest exactly when they give
    the same weights bit for bit (the same numerics on the same machine class do; another class,
    or a GPU, in general does not), so it tells whether a run trained again can keep the
    evaluations of its earlier training (suite.execution.runner)."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}\0{flat.dtype}\0{tuple(tensor.shape)}\0".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def load_checkpoint(path: Path) -> LanguageModel:
    """The run's module. ``weights_only``: a checkpoint holds tensors, numbers, strings and
    dicts, nothing to unpickle as code, so a crafted file cannot run any."""
    module = LanguageModel.load_from_checkpoint(path, map_location="cpu", weights_only=True)
    return module.eval()


def unreadable(path: Path) -> str | None:
    """None when ``path`` holds a checkpoint torch can read (weights only); else why not."""
    import torch

    try:
        torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated, corrupt, not a checkpoint: whatever torch raises
        return f"{type(exc).__name__}: {exc}"
    return None


def hpc_versions(hpc: Path) -> dict[int, Path]:
    """The hpc checkpoints in ``hpc`` by version: ``hpc_ckpt_<n>.ckpt``, the names Lightning writes
    and resumes from (the highest ``n``)."""
    return {int(m.group(1)): p for p in hpc.glob("hpc_ckpt_*.ckpt") if (m := re.fullmatch(r"hpc_ckpt_(\d+)\.ckpt", p.name))}


def write_resume_point(trainer: L.Trainer, hpc: Path) -> Path:
    """An hpc checkpoint of the training so far, as the next version in ``hpc`` (where Lightning's
    requeue writes its own and ``fit`` resumes from), then the earlier versions removed. Written
    beside and renamed, and on disk before the earlier ones go (``durable``), so neither a process
    killed while writing nor a machine losing power leaves no whole point; the partial file's
    name has no ``ckpt_`` in it, which Lightning's version scan would count."""
    hpc.mkdir(parents=True, exist_ok=True)
    versions = hpc_versions(hpc)
    point = hpc / f"hpc_ckpt_{max(versions, default=0) + 1}.ckpt"
    save_atomically(trainer, point, partial=hpc / f".partial-{os.getpid()}", durable=True)
    for older in versions.values():
        older.unlink(missing_ok=True)
    return point


def resumable(hpc: Path) -> str | None:
    """None when the hpc checkpoint Lightning resumes from (the highest version) loads; else why not."""
    versions = hpc_versions(hpc)
    if not versions:
        return "no hpc checkpoint"
    newest = versions[max(versions)]
    why = unreadable(newest)
    return None if why is None else f"{newest.name}: {why}"
