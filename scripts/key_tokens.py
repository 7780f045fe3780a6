"""Choose the key tokens of the ``key_tokens`` diagnostic once per corpus and commit them.

LongPPL's offline mode (Fang et al. 2025; suite/evaluation/evaluators/key_tokens.py): a fixed
reference model picks the tokens whose log-probability rises by more than alpha with long
context (and is above beta with it); every compared model is then scored on those tokens.

1. Trains the reference through the product's own path: ``posbench run`` on
   ``grids/key-token-reference.yaml`` (RoPE, tiny, grids/quick.yaml's recipe at seq_len 1024;
   nothing to do when it is done already, its checkpoint reused).
2. Reads the grid the diagnostic runs in (``grids/diagnostics.yaml``): its training length L
   (the short context K = L), its scales and its evaluation span (``eval.tokens``).
3. Scores the test split's evaluation windows at every scale with the reference (long context)
   and every target's truncated window of its previous K tokens (short context), and writes
   ``tasks/key_tokens/<task>.json`` (validated by the evaluator's own reader before it is kept).

    .venv/bin/python scripts/key_tokens.py             # tasks/key_tokens/lm.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(ROOT), help="the project root")
    ap.add_argument("--reference", default="grids/key-token-reference.yaml", help="the grid that trains the reference")
    ap.add_argument("--for", dest="target", default="grids/diagnostics.yaml", help="the grid the diagnostic runs in")
    ap.add_argument("--task", default="lm")
    ap.add_argument("--out", default="tasks/key_tokens/{task}.json")
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args(argv)

    import torch

    from suite.cli.main import main as posbench
    from suite.data.corpus import load_corpus
    from suite.evaluation.evaluators.extrapolation import evaluation_span, per_token_bits
    from suite.evaluation.evaluators.key_tokens import ALPHA, BETA, choose_key_tokens, read_key_tokens
    from suite.plan.grid import load_plan
    from suite.specs import Project
    from suite.training.checkpoints import load_checkpoint

    root = Path(args.root).resolve()
    project = Project(root)
    reference_grid = root / args.reference
    if posbench(["--root", str(root), "run", str(reference_grid), "--no-site", "--quiet"]) != 0:
        print("the reference's grid failed", file=sys.stderr)
        return 1
    _, plan = load_plan(reference_grid, project)
    [run] = [r for r in plan.runs if r.task.name == args.task]
    target, _ = load_plan(root / args.target, project)
    L, scales, tokens = target.spec.train.seq_len, target.spec.scales, target.spec.eval.tokens
    task = next(t for t in target.tasks if t.name == args.task)
    if task.model_dump() != run.task.model_dump():
        raise SystemExit(f"task {args.task} differs between {args.reference} and {args.target}")

    reference = load_checkpoint(project.checkpoints / f"{run.run_id}.ckpt").model.eval()
    corpus = load_corpus(run.task.corpus)
    if corpus.fingerprint != run.data_fingerprint:
        raise SystemExit(f"the corpus is {corpus.fingerprint}; the reference trained on {run.data_fingerprint}")
    start = time.perf_counter()
    chosen = choose_key_tokens(reference, corpus["test"], L, scales, tokens, short_context=L, alpha=ALPHA, beta=BETA,
                               batch_size=args.batch_size)
    T = run.train.seq_len
    bits = per_token_bits(reference, evaluation_span(corpus["test"], tokens, T), T, args.batch_size)
    doc = {
        "format": 1, "task": args.task, "corpus_fingerprint": corpus.fingerprint,
        "reference": {"run_id": run.run_id, "grid": args.reference, "encoding": run.encoding.name,
                      "size": run.size.name, "seed": run.seed, "train": run.train.model_dump(exclude_none=True),
                      "bpb": round(bits.mean().item(), 6)},
        "alpha": ALPHA, "beta": BETA, "short_context": L, "train_len": L, "tokens": tokens,
        "scales": chosen,
    }
    out = root / args.out.format(task=args.task)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    for s in chosen:
        print(f"{s['scale']:>3}x ({s['eval_len']:>5}): {len(s['indices']):>5} key tokens of {s['windows'] * s['eval_len']}")
    tmp.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    read_key_tokens(tmp)  # what the evaluator will accept
    tmp.replace(out)
    print(f"{out} (reference {run.run_id}, bpb {doc['reference']['bpb']} at {T}; chosen in {time.perf_counter() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
