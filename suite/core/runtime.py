"""Runtime knobs every stage that runs a model shares: devices, processes, the lr schedule.

* ``POSBENCH_DEVICES`` / ``POSBENCH_NODES`` (``posbench run-one --devices N --nodes M``)
  ask for DDP over N devices on each of M nodes; :func:`world` reads them.
* ``POSBENCH_RESUME_EVERY_S``: how often a run writes a resume point
  (suite.training.trainer.ResumePoints); :func:`resume_every_s` reads it.
* :func:`device_settings`: CPU by default (deterministic: the same run gives the same
  numbers), a GPU when there is one (bf16 autocast).
"""

from __future__ import annotations

import ctypes
import gc
import math
import os
import resource
from pathlib import Path

import torch

DEVICES_ENV, NODES_ENV = "POSBENCH_DEVICES", "POSBENCH_NODES"
RESUME_EVERY_ENV = "POSBENCH_RESUME_EVERY_S"
RESUME_EVERY_S = 600.0  # a 10-minute loss at most; a tiny run (under a minute) never writes one


def resume_every_s() -> float | None:
    """Seconds of training between two resume points: ``POSBENCH_RESUME_EVERY_S`` (a number above
    0, or ``off`` for none), :data:`RESUME_EVERY_S` when unset."""
    raw = os.environ.get(RESUME_EVERY_ENV, "").strip()
    if not raw:
        return RESUME_EVERY_S
    if raw.lower() == "off":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{RESUME_EVERY_ENV}={raw!r}: give a number of seconds above 0, or 'off'")
    return value


def world() -> tuple[int, int]:
    """(devices per node, nodes) asked for through the environment (default 1, 1)."""
    return int(os.environ.get(DEVICES_ENV) or 1), int(os.environ.get(NODES_ENV) or 1)


def launched_rank() -> int:
    """This process's global rank as a launcher set it: srun, torchrun, or Lightning's
    own launcher for the ranks it starts; 0 for a process nobody launched."""
    for var in ("SLURM_PROCID", "RANK"):
        if os.environ.get(var):
            return int(os.environ[var])
    return int(os.environ.get("NODE_RANK") or 0) * world()[0] + int(os.environ.get("LOCAL_RANK") or 0)


def device_settings() -> dict:
    """Lightning Trainer settings for this machine: a GPU in bf16 where there is one, else the CPU in fp32."""
    if torch.cuda.is_available():
        return {"accelerator": "gpu", "devices": 1, "precision": "bf16-mixed", "deterministic": False}
    return {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": True}


def evaluation_device() -> torch.device:
    """Where evaluations run: the GPU when there is one, as training (Lightning moves a model
    back to the CPU when its fit ends, so an evaluation must move it again)."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def warmup_cosine(step: int, warmup: int, total: int) -> float:
    """Learning-rate multiplier: linear warmup, then cosine decay to 10%."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


PROC = Path("/proc/self")


def reset_peak_memory(collect: bool = True) -> None:
    """Start a new high-water mark, so the next :func:`peak_memory_mb` is this piece's and not
    the process's (a worker runs many pieces): the CUDA allocator's peak on a GPU; on Linux the
    resident set's peak (VmHWM), which writing 5 to /proc/self/clear_refs resets."""
    if collect:  # what earlier pieces left in cycles goes now, not during this piece (a full collection:
        gc.collect()  # 0.1-0.2 s in a process holding Lightning and lm-eval, so once per training run)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return
    _return_free_memory()
    try:
        (PROC / "clear_refs").write_text("5")
    except OSError:
        pass  # not Linux: the process's peak is all there is (peak_memory_mb says which)


def _return_free_memory() -> None:
    """glibc keeps freed heap for reuse, so the resident set stays at an earlier piece's peak;
    malloc_trim gives it back, and the next peak is the next piece's own."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # another C library: its resident set is what it is


def peak_memory_mb() -> float:
    """Peak memory since :func:`reset_peak_memory`: CUDA allocations on a GPU, else the peak
    resident set (VmHWM; the process's lifetime peak where /proc is missing)."""
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    try:
        status = (PROC / "status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
