"""The ``posbench`` command.

    posbench validate PATH...   check spec files without training anything (--import: load and run plugin code)
    posbench new-encoding NAME  write a spec, an implementation skeleton and its test (see CONTRIBUTING.md)
    posbench verify RECORD      re-train a run record and compare its figures within stated tolerances
    posbench replicate          re-run a stratified sample of the published snapshot; do its headlines hold?
    posbench plan GRID          the grid's training runs and evaluations, and their status
    posbench run GRID           train and evaluate what is missing, then ingest and render the site
                                (--executor slurm: submit it as one job array and return)
    posbench run-one MANIFEST I one entry of a submitted manifest (a SLURM array task)
    posbench status GRID        done / running / pending / failed, and the SLURM arrays (--ingest)
    posbench eval RUN --tasks   lm-eval tasks on one trained run, each an evaluation record
    posbench ingest             run records -> results/posbench.duckdb
    posbench site               DuckDB -> site/_build/
    posbench leaderboard        the leaderboard as a table in the terminal
    posbench bench              what each encoding costs: training and evaluation speed, memory, MFU

Bad input gets ``file:line: field: message`` on stderr and exit code 1, and nothing
is trained or written.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from suite.cli.bench import cmd_bench
from suite.cli.cluster import cmd_run_one, cmd_status
from suite.cli.common import err_console, executor_classes, executor_names, one_line, report_errors
from suite.cli.grid import cmd_eval, cmd_plan, cmd_run
from suite.cli.results import cmd_ingest, cmd_leaderboard, cmd_publish, cmd_rescore, cmd_site
from suite.cli.submit import cmd_new_encoding, cmd_replicate, cmd_submit, cmd_verify
from suite.cli.validate import cmd_validate
from suite.results.records import RecordError, RecordErrors
from suite.specs import SpecErrors
from suite.submission.scaffold import FAMILIES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="posbench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.environ.get("POSBENCH_ROOT", "."),
                        help="project root holding encodings/, grids/, results/ (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check spec files (encodings, grids, sizes, tasks) without training")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--import", dest="import_code", action="store_true",
                   help="import external implementations (module:Class, file.py:Class) and check them; for an "
                        "encoding file also run the plugin contract and a CPU smoke run")
    p.set_defaults(func=cmd_validate, trains=True)  # its smoke run of an imported encoding trains

    p = sub.add_parser("new-encoding", help="write a spec, an implementation skeleton and a test for a new encoding")
    p.add_argument("name", metavar="NAME", help="the encoding's name (lower case, digits, '-' and '_')")
    p.add_argument("--family", required=True, choices=FAMILIES,
                   help="which hook the skeleton implements")
    p.set_defaults(func=cmd_new_encoding)

    p = sub.add_parser("verify", help="re-train a training-run record (and re-run its evaluations) and compare the figures")
    p.add_argument("record", metavar="RECORD", help="results/runs/<run_id>.json, or a run id")
    p.add_argument("--no-evals", action="store_true", help="compare the training loss only")
    p.add_argument("--json", metavar="FILE", help="also write the outcome, figure by figure, as JSON")
    p.set_defaults(func=cmd_verify, trains=True)

    p = sub.add_parser("replicate", help="re-run a stratified sample of the published snapshot with each record's "
                                         "numerics: per piece bit-identical, within tolerance or different, and "
                                         "whether each headline still holds")
    p.add_argument("--snapshot", default="leaderboard", metavar="FOLDER", help="the snapshot (default leaderboard/)")
    p.add_argument("--sample", type=int, default=20, metavar="N", help="training runs to re-run (default 20)")
    p.add_argument("--seed", type=int, default=0, help="which run of each stratum is drawn (default 0)")
    p.add_argument("--cheapest", action="store_true", help="the quickest run of each stratum instead of a drawn one")
    p.add_argument("--grids", nargs="+", metavar="GRID", help="only the runs of these grids (by name)")
    p.add_argument("--cpu", choices=("this", "any"), default="any",
                   help="any (default): every run, each compared bit for bit on its record's machine class and "
                        "within the measured cross-class tolerances elsewhere; this: only the runs of this "
                        "machine's class")
    p.add_argument("--json", metavar="FILE", help="also write each piece's figures and each headline as JSON")
    p.set_defaults(func=cmd_replicate, trains=True)

    p = sub.add_parser("submit", help="write submissions/NAME/: what a pull request for encoding NAME needs "
                                      "(spec, plugin, tests, its records, a verify result)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--grid", default="quick", metavar="GRID",
                   help="the standard grid whose every run of NAME the bundle must hold: quick (default), or another "
                        "grid of the published snapshot")
    p.set_defaults(func=cmd_submit, trains=True)

    p = sub.add_parser("plan", help="show a grid's training runs and evaluations and their status")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--size", action="append", default=None, metavar="SIZE",
                   help="only the pieces of this size (repeatable): one rung of a size ladder, and its cost")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="train and evaluate what GRID lacks, then ingest and render the site")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--retry-failed", action="store_true", help="train and evaluate failed pieces again")
    # a --jobs worker's: run the plan it was given and stop; the command that started the workers
    # chooses a tuned grid's rates after the sweep and starts the next round (and counts it)
    p.add_argument("--one-round", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.add_argument("--no-ingest", action="store_true", help="write records only (workers; ingest once at the end)")
    p.add_argument("--quiet", action="store_true", help="no per-step training progress bar")
    p.add_argument("--with-published", nargs="?", const="leaderboard", default=None, metavar="FOLDER",
                   help="first add the published snapshot's records (default leaderboard/) to results/: its pieces "
                        "count as done, so only what it lacks trains")
    p.add_argument("--size", action="append", default=None, metavar="SIZE",
                   help="only the pieces of this size of the grid (repeatable): a size ladder one rung at a time")
    p.add_argument("--executor", default="local", choices=executor_names(), help="where pieces run (default local)")
    for executor in executor_classes():
        executor.add_arguments(p)
    p.set_defaults(func=cmd_run, trains=True)

    p = sub.add_parser("run-one", help="one entry of a submitted manifest (what a SLURM array task runs)")
    p.add_argument("manifest", metavar="MANIFEST", help="results/slurm/<timestamp>/manifest.json")
    p.add_argument("index", metavar="INDEX", type=int, help="the entry: $SLURM_ARRAY_TASK_ID")
    p.add_argument("--devices", type=int, default=1,
                   help="train with DDP over N devices (CPU processes, or GPUs) per node (default 1); sets POSBENCH_DEVICES")
    p.add_argument("--nodes", type=int, default=1, help="nodes the run trains across (default 1); sets POSBENCH_NODES")
    p.set_defaults(func=cmd_run_one, trains=True)

    p = sub.add_parser("status", help="done / running / pending / failed pieces of GRID, and its SLURM arrays")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--ingest", action="store_true", help="then build results/posbench.duckdb from the records")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("eval", help="run lm-eval tasks on one trained run; each result is an evaluation record")
    p.add_argument("run", metavar="RUN", help="a training run id (see `posbench plan`)")
    p.add_argument("--tasks", required=True, help="comma-separated synthetic tasks, e.g. copy,passkey")
    p.add_argument("--scales", default="1,2,4,8,16", help="comma-separated scales (default 1,2,4,8,16)")
    p.add_argument("--encoding", help="evaluate as this encoding (a training-free variant of the run's; default: as trained)")
    p.add_argument("--examples", type=int, default=64, help="test examples per task and scale (default 64)")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ingest", help="build results/posbench.duckdb from the records in results/ (idempotent)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("site", help="render the static leaderboard site into site/_build/")
    p.add_argument("--published", nargs="?", const="leaderboard", default=None, metavar="FOLDER",
                   help="render the committed snapshot (default folder: leaderboard/) into site/published/ instead of "
                        "results/ into site/_build/; trains nothing")
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("publish", help="write the records of GRIDs into the published snapshot (leaderboard/)")
    p.add_argument("grids", nargs="+", metavar="GRID")
    p.add_argument("--out", default="leaderboard", help="the snapshot folder (default: leaderboard)")
    p.add_argument("--whole-sizes", action="store_true",
                   help="publish a grid's size only once every piece of it is recorded (a size ladder, rung by rung); "
                        "SNAPSHOT.json names the sizes left out")
    p.add_argument("--size", action="append", default=None, metavar="SIZE",
                   help="only the pieces of this size (repeatable; a size of at least one GRID): a rung still "
                        "running, written with --out to a folder of its own and committed as it goes")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("rescore", help="recompute task figures from their stored per-sample outputs (no model) "
                                       "and compare them with the records")
    p.add_argument("eval_ids", nargs="*", metavar="EVAL_ID", help="evaluations to rescore (default: every one with samples)")
    p.set_defaults(func=cmd_rescore)

    p = sub.add_parser("leaderboard", help="the leaderboard in the terminal: the answers and an index of its boards")
    p.add_argument("--board", metavar="NAME", help="print only this board (the index names each)")
    p.add_argument("--all", action="store_true", help="print every board after the answers")
    p.add_argument("--format", default="table", choices=("table", "csv", "markdown"), help="output format (default table)")
    p.add_argument("--published", nargs="?", const="leaderboard", default=None, metavar="FOLDER",
                   help="the boards of the committed snapshot (default folder: leaderboard/) instead of results/")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("bench", help="measure what each encoding costs (training and evaluation speed, memory, MFU)")
    p.add_argument("--encodings", help="comma-separated encoding specs (default: nope,rope,alibi,t5,kerple-log,fire,"
                                       "sandwich,cope,xpos,addrope); NoPE is always measured, for the ratios")
    p.add_argument("--size", help="a size in sizes/ (default: d_model 256, 4 layers, 4 heads, d_ff 1024)")
    p.add_argument("--seq-len", type=int, default=256, help="training length T (default 256)")
    p.add_argument("--batch", type=int, default=16, help="training batch (default 16)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--steps", type=int, default=3, help="timed training steps per loop (default 3; 0: no training)")
    p.add_argument("--warmup", type=int, default=1, help="untimed training steps first (default 1)")
    p.add_argument("--scales", default="1,4,16", help="evaluation lengths as multiples of T (default 1,4,16)")
    p.add_argument("--eval-batch", type=int, default=1, help="sequences per evaluation forward (default 1)")
    p.add_argument("--eval-repeats", type=int, default=1, help="timed evaluation forwards per scale (default 1)")
    p.add_argument("--query-chunk", type=int, help="queries per chunk in long evaluation (default: the model's; 0: never)")
    p.add_argument("--threads", type=int, help="torch threads (default: torch's; 1 is steadier on a shared machine)")
    p.add_argument("--rounds", type=int, default=1, help="measure the speeds this many times over the list, alternate "
                                                         "rounds reversed, and keep each figure's median (default 1)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model, as a recipe's compile: true")
    p.set_defaults(func=cmd_bench)
    return parser


def training_environment_problem() -> str | None:
    """What is wrong with the environment variables a training reads, or None
    (``POSBENCH_RESUME_EVERY_S``: suite.core.runtime.resume_every_s)."""
    from suite.core.runtime import resume_every_s

    try:
        resume_every_s()
    except ValueError as exc:
        return str(exc)
    return None


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "quiet", False):
        os.environ["TQDM_DISABLE"] = "1"  # also lm-eval's request bars
    if getattr(args, "trains", False) and (problem := training_environment_problem()):
        err_console.print(f"error: {problem}", markup=False)  # before anything starts: no run records it as failed
        return 1
    try:
        return args.func(args)
    except SystemExit as exc:
        if exc.code is None:  # Lightning's SIGTERMException carries no code: a SIGTERM, not a success
            return 128 + signal.SIGTERM
        raise
    except BrokenPipeError:  # `posbench leaderboard --format csv | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes stdout at exit
        return 0
    except SpecErrors as exc:
        return report_errors(exc.errors)
    except FileNotFoundError as exc:
        err_console.print(one_line(f"error: {exc}"), markup=False, soft_wrap=True)
        return 1
    except RecordErrors as exc:  # several: a line each
        for error in exc.errors:
            err_console.print(one_line(f"error: {error}"), markup=False, soft_wrap=True)
        return 1
    except RecordError as exc:  # a record or snapshot that cannot be used: its file and why, on one line
        err_console.print(one_line(f"error: {exc}"), markup=False, soft_wrap=True)
        return 1
    except OSError as exc:  # a local fault (a read-only results/, a file where a folder belongs): one line
        where = f"{exc.filename}: " if exc.filename else ""
        err_console.print(one_line(f"error: {where}{exc.strerror or exc}: fix it and run the command again"),
                          markup=False, soft_wrap=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
