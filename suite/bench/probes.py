"""What `posbench bench` measures with: device sync, this machine's matmul peak, FLOPs per token, and peak CPU memory."""

from __future__ import annotations

import ctypes
import gc
import math
import platform
import time
from pathlib import Path

import torch

MMAP_THRESHOLD = 128 * 1024


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def now(device: torch.device) -> float:
    """The bench's clock. On CPU: the process's CPU time (user + system over its threads,
    ``time.process_time``), which another process time-sharing the cores does not advance, so
    a figure is what the work costs a core, not what share of one the scheduler gave it; with
    one torch thread it equals wall-clock time on an idle core. On CUDA: wall-clock time (the
    GPU's work is no CPU time)."""
    return time.perf_counter() if device.type == "cuda" else time.process_time()


CLOCKS = {"cpu": "CPU time of the process (time.process_time): unmoved by other processes sharing the cores",
          "cuda": "wall-clock time (time.perf_counter), synchronized"}


def peak_dtype(device: torch.device) -> torch.dtype:
    """The precision training's matmuls run in: bf16 autocast on a GPU, fp32 on a CPU
    (suite.core.runtime.device_settings), so MFU compares like with like."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def matmul_peak(device: torch.device, n: int | None = None, repeats: int = 5) -> float:
    """FLOP/s of the fastest of ``repeats`` n x n matmuls (2 n^3 FLOPs each), in
    :func:`peak_dtype`: fp32 and n = 2048 on a CPU; bf16 and n = 8192 on a GPU, large enough
    to fill its tensor cores (an H100's 8192^3 bf16 product runs near its dense peak)."""
    n = n or (8192 if device.type == "cuda" else 2048)
    a, b = (torch.randn(n, n, device=device, dtype=peak_dtype(device)) for _ in range(2))
    a @ b
    best = math.inf
    for _ in range(repeats):
        sync(device)
        start = now(device)
        a @ b
        sync(device)
        best = min(best, now(device) - start)
    return 2 * n**3 / best


def matmul_params(model) -> int:
    """N: weights of every matmul (attention, MLP, the tied head once)."""
    blocks = sum(m.weight.numel() for m in model.blocks.modules() if isinstance(m, torch.nn.Linear))
    return blocks + model.head.weight.numel()


def flops_per_token(model, seq_len: int, training: bool) -> float:
    cfg = model.cfg
    n, attention = matmul_params(model), cfg.n_layers * seq_len * cfg.d_model
    return 6 * n + 12 * attention if training else 2 * n + 4 * attention


# -- memory -------------------------------------------------------------------------


class CpuPeak:
    """Peak resident set of a block of code, minus the resident set before it (Linux)."""

    def __init__(self):
        self.libc = ctypes.CDLL("libc.so.6") if platform.system() == "Linux" else None

    def prepare(self) -> None:
        if self.libc is not None:
            self.libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD: big blocks by mmap, returned on free


    @staticmethod
    def _status(key: str) -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        raise OSError(f"no {key} in /proc/self/status")

    def measure(self, fn) -> float | None:
        gc.collect()
        if self.libc is not None:
            self.libc.malloc_trim(0)
        try:
            Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current resident set
            before = self._status("VmRSS")
        except OSError:
            return None
        fn()
        return (self._status("VmHWM") - before) / 2**20


def measure_peak_mib(fn, device: torch.device, cpu: CpuPeak) -> float | None:
    if device.type != "cuda":
        return cpu.measure(fn)
    sync(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    fn()
    sync(device)
    return (torch.cuda.max_memory_allocated(device) - before) / 2**20


# -- the two training loops -----------------------------------------------------------
