"""`posbench bench`: what each encoding costs."""

from __future__ import annotations

from suite.cli.common import console, project_of, quiet_libraries


def cmd_bench(args) -> int:
    """Time and measure encodings in this process (suite.bench.run); a record in results/bench/."""
    from suite.bench.run import DEFAULT_ENCODINGS, BenchConfig, run_bench, tables, write_bench_record

    quiet_libraries()
    project = project_of(args)
    cfg = BenchConfig(encodings=tuple(e for e in (args.encodings or ",".join(DEFAULT_ENCODINGS)).split(",") if e),
                      size=args.size, seq_len=args.seq_len, batch=args.batch, device=args.device, steps=args.steps,
                      warmup=args.warmup, scales=tuple(int(s) for s in args.scales.split(",")),
                      eval_batch=args.eval_batch, eval_repeats=args.eval_repeats, query_chunk=args.query_chunk,
                      threads=args.threads, compile=args.compile, rounds=args.rounds)
    record = run_bench(cfg, project, log=lambda m: console.print(m, markup=False))
    for table in tables(record):
        console.print(table)
    console.print(f"record: {write_bench_record(record, project.results / 'bench')}")
    return 0
