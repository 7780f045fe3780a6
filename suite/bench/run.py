"""``posbench bench``: what each encoding costs, measured in one process and one run.

For every encoding of a list, at one model shape, sequence length, batch and device:

* **training tokens/s** through the real Lightning module (:class:`suite.training.fit.LanguageModel`
  under a ``Trainer`` set up as :func:`suite.training.fit.fit` sets it up) and through a bare
  PyTorch loop over the same model class (the module's own optimizer and schedule,
  the same loss, gradient clipping and batches): the median of the timed steps after
  warm-up, and the ratio of the two (the cost of the wrapper);
* **evaluation tokens/s** of a no-grad forward at 1x, 4x and 16x the sequence length;
* **peak memory** of that forward: on CUDA the allocator's peak minus what was
  allocated before it; on CPU the process's peak resident set (``VmHWM`` after
  resetting it by writing 5 to ``/proc/self/clear_refs``) minus the resident set
  before the forward (after a warm-up forward at that length). On CPU this is measured
  in a fresh process spawned for it, whose glibc serves every allocation of 128 KiB or
  more by ``mmap`` (``mallopt``) from the start, so freed tensors go back to the system
  and a forward cannot hide in memory the allocator kept from earlier work;
* **the clock**: on CPU every duration is the process's CPU time (``time.process_time``), so
  that another process time-sharing the cores does not enter the figures (on a 2-core machine
  shared by two other trainings, wall-clock tokens/s of one encoding swung by 2x within a run);
  the matmul peak is timed by the same clock, so MFU is per core. On CUDA: wall-clock time;
* **model FLOP utilization**: achieved FLOP/s over this machine's matmul peak (the best of
  a few 2048 x 2048 fp32 matmuls on CPU, 8192 x 8192 bf16 ones on CUDA, where training runs
  in bf16 autocast; timed at the start and at the end of the run), with
  ``6 N + 12 L T d`` FLOPs per trained token and ``2 N + 4 L T d`` per evaluated token
  (PaLM, Chowdhery et al. 2022, App. B; N = weights of every matmul, the tied output
  head counted once, embeddings lookups and the encodings' own work not counted; the
  attention term counts the full T x T square).

Every figure is also given as a ratio to NoPE measured in the same run (NoPE is added
to the list when missing). On a shared machine the load drifts while the list is measured,
and one timing of one encoding (NoPE's above all, which every ratio divides by) can land in
a busy second: with ``rounds`` > 1 the speed figures are measured that many times, the list
in order and then reversed in turn (a drift that slows the end of one round slows the start
of the next), and each figure is the median over the rounds; the ratios divide medians. Training batches are random bytes, the same for both loops:
data loading is not part of these figures. The record goes to
``results/bench/<bench_id>.json``; ``posbench ingest`` loads it into the ``bench`` table.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import torch

from suite.core import numerics
from suite.bench.training_steps import bare_step_times, lightning_step_times, random_batches, training_run
from suite.bench.probes import CLOCKS, MMAP_THRESHOLD, now, sync, matmul_peak, peak_dtype, flops_per_token, CpuPeak, measure_peak_mib

BENCH_SCHEMA_VERSION = 1
DEFAULT_ENCODINGS = ("nope", "rope", "alibi", "t5", "kerple-log", "fire", "sandwich", "cope", "xpos", "addrope")
DEFAULT_SHAPE = {"name": "d256-l4", "d_model": 256, "n_layers": 4, "n_heads": 4, "d_ff": 1024}  # the issue's CPU shape
TRAIN_FLOPS = "6 N + 12 L T d per trained token"
EVAL_FLOPS = "2 N + 4 L T d per evaluated token (T: the eval length)"


@dataclass(frozen=True)
class BenchConfig:
    encodings: tuple[str, ...] = DEFAULT_ENCODINGS
    size: str | None = None  # a name in sizes/; None: DEFAULT_SHAPE
    seq_len: int = 256
    batch: int = 16
    device: str = "cpu"
    steps: int = 3  # timed training steps per loop (0: no training figures)
    warmup: int = 1  # untimed steps before them
    scales: tuple[int, ...] = (1, 4, 16)
    eval_batch: int = 1  # sequences per evaluation forward, at every scale (memory then grows with T alone)
    eval_repeats: int = 1  # timed evaluation forwards per scale, after one warm-up
    query_chunk: int | None = None  # the model's query chunk for long evaluation; None: the model's default; 0: never
    threads: int | None = None  # torch intra-op threads; None: torch's default (on a shared machine 1 is steadier)
    compile: bool = False  # torch.compile the model (inductor), as a recipe's compile: true does
    seed: int = 0
    rounds: int = 1  # speed measured this many times over the list (alternate rounds reversed), medians kept


@dataclass
class Row:
    """One encoding's figures; ``metrics`` in long form (metric, scale, value)."""

    encoding: str
    display_name: str
    attention_path: str
    n_params: int
    metrics: list[dict] = field(default_factory=list)

    def add(self, metric: str, value: float | None, scale: int | None = None, unit: str = "") -> None:
        self.metrics.append({"metric": metric, "scale": scale, "value": value, "unit": unit})

    def get(self, metric: str, scale: int | None = None) -> float | None:
        return next((m["value"] for m in self.metrics if m["metric"] == metric and m["scale"] == scale), None)


# -- references ---------------------------------------------------------------------


def eval_inputs(model, cfg: BenchConfig, scale: int, device: torch.device) -> torch.Tensor | None:
    """Random bytes [eval_batch, scale x seq_len], or None where the encoding cannot represent that length."""
    T = scale * cfg.seq_len
    limit = model.encodings[0].max_length()
    if limit is not None and T > limit:
        return None
    return torch.randint(0, 256, (cfg.eval_batch, T), generator=torch.Generator().manual_seed(scale)).to(device)


def at_scale(model, scale: int, fn):
    model.set_scale(scale)
    try:
        with torch.no_grad():
            return fn()
    finally:
        model.set_scale(1)


def eval_throughput(model, row: Row, cfg: BenchConfig, device: torch.device, peak: float) -> None:
    model.eval()
    for s in cfg.scales:
        x = eval_inputs(model, cfg, s, device)
        if x is None:
            row.add("eval_tokens_per_s", None, s, "tokens/s")
            continue

        def timed():
            model(x)  # warm-up: tables grown to this length
            out = []
            for _ in range(cfg.eval_repeats):
                sync(device)
                start = now(device)
                model(x)
                sync(device)
                out.append(now(device) - start)
            return statistics.median(out)

        tokens_per_s = x.numel() / at_scale(model, s, timed)
        row.add("eval_tokens_per_s", tokens_per_s, s, "tokens/s")
        row.add("eval_mfu", tokens_per_s * flops_per_token(model, x.shape[1], training=False) / peak, s, "fraction")
        row.metrics[-1]["peak_used"] = peak


def eval_memory(model, row: Row, cfg: BenchConfig, device: torch.device, cpu: CpuPeak) -> None:
    model.eval()
    for s in cfg.scales:
        x = eval_inputs(model, cfg, s, device)

        def measured():
            model(x)  # warm-up: tables grown to this length, allocator caches filled
            return measure_peak_mib(lambda: model(x), device, cpu)

        row.add("eval_peak_mib", None if x is None else at_scale(model, s, measured), s, "MiB")


def memory_figures(cfg: BenchConfig, root: str, names: tuple[str, ...]) -> dict[str, list[dict]]:
    """Peak memory metrics per encoding, measured on fresh models of the same shape (the
    weights do not change what a forward allocates). On CPU this runs in a fresh process
    (:func:`run_bench` spawns it) whose allocator was never used without the mmap threshold."""
    from suite.specs import Project, load_encoding
    from suite.modeling.build import build_model, model_config

    device, cpu = torch.device(cfg.device), CpuPeak()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    if device.type != "cuda":
        cpu.prepare()
    project = Project(Path(root))
    size = load_size_spec(project, cfg.size)
    out = {}
    for name in names:
        torch.manual_seed(cfg.seed)
        model = build_model(load_encoding(project.spec_path("encodings", name, project.root)), model_config(size, cfg.seq_len)).to(device)
        model.use_flex_attention(device.type == "cuda")
        if cfg.query_chunk is not None:
            model.query_chunk = cfg.query_chunk or 2**62
        row = Row(name, name, model.path_name, 0)
        eval_memory(model, row, cfg, device, cpu)
        out[name] = row.metrics
        del model
    return out


def memory_in_fresh_process(cfg: BenchConfig, root: Path, names: tuple[str, ...]) -> dict[str, list[dict]]:
    if cfg.device.startswith("cuda"):
        return memory_figures(cfg, str(root), names)
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(memory_figures, (cfg, str(root), names))


# -- the whole run ------------------------------------------------------------------


def bench_id(cfg: BenchConfig, created_at: str) -> str:
    digest = hashlib.sha256(json.dumps(asdict(cfg), sort_keys=True).encode()).hexdigest()[:8]
    return f"{created_at.replace(':', '').replace('-', '')[:15]}-{digest}"


def machine() -> dict:
    info = {"cpu": numerics.cpu_model(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
            "numerics": numerics.measured()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
    return info


def load_size_spec(project, name: str | None):
    from suite.specs import SizeSpec, load_size

    if name is None:
        return SizeSpec.model_validate(DEFAULT_SHAPE)
    return load_size(project.spec_path("sizes", name, project.root))


def add_ratios(rows: list[Row]) -> None:
    """vs_nope on every metric of every row: its value over NoPE's (same metric and scale)."""
    base = next((r for r in rows if r.encoding == "nope"), None)
    for row in rows:
        for m in row.metrics:
            ref = None if base is None else base.get(m["metric"], m["scale"])
            m["vs_nope"] = m["value"] / ref if m["value"] is not None and ref else None


def measure_speed(project, spec, size, cfg: BenchConfig, device: torch.device, peak: float) -> Row:
    """One encoding's training and evaluation speed (and MFU against ``peak``), on a fresh model."""
    total = cfg.warmup + cfg.steps
    run = training_run(project, spec, size, cfg, max(total, 1))
    batches = random_batches(cfg, total, device)
    if cfg.steps > 0:
        lightning_times, module = lightning_step_times(run, batches, device)
        bare_times = bare_step_times(run, batches, device)
        model = module.model.to(device)  # Lightning moves it back to the CPU when the fit ends
    else:
        from suite.modeling.build import build_model, model_config

        lightning_times = bare_times = []
        model = build_model(spec, model_config(size, cfg.seq_len)).to(device)
        model.use_flex_attention(device.type == "cuda")
    if cfg.query_chunk is not None:
        model.query_chunk = cfg.query_chunk or 2**62
    row = Row(spec.name, spec.display_name or spec.name, model.path_name, model.num_params())
    tokens, per_token = cfg.batch * cfg.seq_len, flops_per_token(model, cfg.seq_len, training=True)
    for metric, times in (("train_tokens_per_s", lightning_times), ("bare_train_tokens_per_s", bare_times)):
        timed = times[cfg.warmup :]
        tps = tokens / statistics.median(timed) if timed else None
        row.add(metric, tps, None, "tokens/s")
        row.add(metric.replace("tokens_per_s", "mfu"), tps * per_token / peak if tps else None, None, "fraction")
        row.metrics[-1]["peak_used"] = peak
    lightning, bare = row.get("train_tokens_per_s"), row.get("bare_train_tokens_per_s")
    row.add("lightning_vs_bare", lightning / bare if lightning and bare else None, None, "ratio")
    eval_throughput(model, row, cfg, device, peak)
    return row


def median_row(rows: list[Row]) -> Row:
    """One row of an encoding's rounds: each metric's median over them (None where any round has none)."""
    out = Row(rows[0].encoding, rows[0].display_name, rows[0].attention_path, rows[0].n_params)
    for i, m in enumerate(rows[0].metrics):
        values = [r.metrics[i]["value"] for r in rows]
        out.metrics.append({**m, "value": None if any(v is None for v in values) else statistics.median(values)})
    return out


def run_bench(cfg: BenchConfig, project, log=print) -> dict:
    """Measure everything (module docstring) and return the record (not yet written)."""
    from suite.specs import load_encoding

    device = torch.device(cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    names = cfg.encodings if "nope" in cfg.encodings else ("nope", *cfg.encodings)
    specs = [load_encoding(project.spec_path("encodings", n, project.root)) for n in names]
    size = load_size_spec(project, cfg.size)
    created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load_before, start = os.getloadavg(), time.perf_counter()
    peak = matmul_peak(device)
    log(f"{str(peak_dtype(device)).removeprefix('torch.')} matmul peak: {peak / 1e9:.1f} GFLOP/s")
    if cfg.steps > 0:  # the process's first Lightning fit and loop pay one-time costs: not the first encoding's
        warm = training_run(project, specs[0], size, cfg, 2)
        lightning_step_times(warm, random_batches(cfg, 2, device), device)
        bare_step_times(warm, random_batches(cfg, 2, device), device)
    rounds: dict[str, list[Row]] = {s.name: [] for s in specs}
    for n in range(max(cfg.rounds, 1)):
        for spec in (specs if n % 2 == 0 else specs[::-1]):
            rounds[spec.name].append(measure_speed(project, spec, size, cfg, device, peak))
            log(f"{spec.name}: trained and evaluated, round {n + 1} ({time.perf_counter() - start:.0f}s)")
    rows = [median_row(rounds[s.name]) for s in specs]
    memory = memory_in_fresh_process(cfg, project.root, tuple(s.name for s in specs))
    peak = max(peak, matmul_peak(device))  # the better of the start and the end: a shared machine's load varies
    for row in rows:  # utilization against the final peak
        for m in row.metrics:
            used = m.pop("peak_used", None)
            if used and m["value"] is not None:
                m["value"] *= used / peak
    for row in rows:
        row.metrics += memory[row.encoding]
    add_ratios(rows)
    return {"schema_version": BENCH_SCHEMA_VERSION, "kind": "bench", "bench_id": bench_id(cfg, created_at),
            "created_at": created_at, "config": {**asdict(cfg), "size": size.name, "shape": size.model_dump()},
            "machine": machine(), "load_average": {"start": list(load_before), "end": list(os.getloadavg())},
            "wall_s": time.perf_counter() - start, "matmul_peak_flops": peak,
            "flop_formula": {"train": TRAIN_FLOPS, "eval": EVAL_FLOPS}, "clock": CLOCKS["cuda" if device.type == "cuda" else "cpu"],
            "memory": "CUDA: allocator peak minus allocated before the forward" if device.type == "cuda" else
                      "CPU: VmHWM (reset through /proc/self/clear_refs) minus VmRSS before the forward; "
                      f"glibc mmap threshold {MMAP_THRESHOLD} bytes",
            "rows": [asdict(r) for r in rows]}


def write_bench_record(record: dict, directory: Path) -> Path:
    """``directory/<bench_id>.json``, written beside and renamed (never half a file)."""
    from suite.results.bench_records import write_bench_file

    return write_bench_file(record, directory)


# -- the terminal tables ------------------------------------------------------------


def _fmt(value, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def tables(record: dict):
    """Rich tables of a record: training, evaluation throughput, evaluation memory."""
    from rich.table import Table

    cfg, rows = record["config"], record["rows"]

    def metric(row, name, scale=None, key="value"):
        return next((m.get(key) for m in row["metrics"] if m["metric"] == name and m["scale"] == scale), None)

    shape = cfg["shape"]
    where = (f"d={shape['d_model']}, {shape['n_layers']} layers, {shape['n_heads']} heads, d_ff={shape['d_ff']}, "
             f"T={cfg['seq_len']}, {cfg['device']}; matmul peak {record['matmul_peak_flops'] / 1e9:.0f} GFLOP/s")
    train = Table(title=f"training, batch {cfg['batch']} ({where}); median of {cfg['steps']} steps after {cfg['warmup']}")
    for col in ("encoding", "path", "Lightning tok/s", "x NoPE", "bare tok/s", "x NoPE", "Lightning/bare", "MFU L", "MFU bare"):
        train.add_column(col, justify="left" if col in ("encoding", "path") else "right")
    for r in rows:
        train.add_row(r["encoding"], r["attention_path"], _fmt(metric(r, "train_tokens_per_s"), ",.0f"),
                      _fmt(metric(r, "train_tokens_per_s", key="vs_nope"), ".2f"),
                      _fmt(metric(r, "bare_train_tokens_per_s"), ",.0f"),
                      _fmt(metric(r, "bare_train_tokens_per_s", key="vs_nope"), ".2f"),
                      _fmt(metric(r, "lightning_vs_bare"), ".2f"), _fmt(metric(r, "train_mfu"), ".0%"),
                      _fmt(metric(r, "bare_train_mfu"), ".0%"))
    scales = cfg["scales"]
    evals = Table(title=f"evaluation forward, batch {cfg['eval_batch']}: tokens/s (x NoPE) and peak memory MiB (x NoPE)")
    evals.add_column("encoding")
    for s in scales:
        evals.add_column(f"{s}x tok/s", justify="right")
    for s in scales:
        evals.add_column(f"{s}x MiB", justify="right")
    for r in rows:
        speed = [f"{_fmt(metric(r, 'eval_tokens_per_s', s), ',.0f')} ({_fmt(metric(r, 'eval_tokens_per_s', s, 'vs_nope'), '.2f')})"
                 for s in scales]
        memory = [f"{_fmt(metric(r, 'eval_peak_mib', s), ',.1f')} ({_fmt(metric(r, 'eval_peak_mib', s, 'vs_nope'), '.2f')})"
                  for s in scales]
        evals.add_row(r["encoding"], *speed, *memory)
    return [train, evals]
