"""Our checkpoints as an lm-eval language model: ``@register_model("posbench")``.

lm-eval computes and aggregates the metrics; this adapter only answers its three
request types for one trained model at one **eval length** (``s x L``, where ``L`` is
the training length), and owns every window decision, so no figure depends on
lm-eval's own defaults (its rolling windows change with its max length).

Tokens are bytes: text is encoded as UTF-8 (with ``surrogateescape``, so any byte
string round-trips through ``str``; for valid UTF-8 it is plain UTF-8), exactly
as :mod:`suite.data.tokenizer` does. There is no BOS token, so **a byte with no
context before it is never scored** (the direct evaluator, :mod:`suite.evaluation.evaluators.extrapolation`,
does the same: its first target is the second byte of the span).

Window policy (also :attr:`PosBenchLM.policy`, recorded with every figure):

* ``loglikelihood(context, continuation)``: one forward pass over
  ``(context + continuation)[:-1]``, left-truncated to its last ``eval_len`` bytes
  (the context loses its oldest bytes; positions restart at 0 at the first byte
  kept); the continuation's bytes are scored, and ``is_greedy`` says whether the
  argmax at every one of them is the continuation's byte. A continuation longer
  than ``eval_len`` is an error, never a silent partial score.
* ``loglikelihood_rolling(text)``: non-overlapping windows of exactly ``eval_len``
  inputs (the last one may be shorter) that share no context; window ``k`` reads
  bytes ``[k E, (k+1) E)`` and predicts ``[k E + 1, (k+1) E + 1)``, so every byte
  after the first is scored exactly once. On the same span this is the direct
  evaluator's computation, number for number.
* ``generate_until(context, gen_kwargs)``: greedy decoding, one byte at a time,
  the model seeing the last ``eval_len`` bytes of context + generation; it stops at
  the first stop sequence (``until``, cut from the answer) or after
  ``max_gen_toks`` bytes. Sampling is refused.

Requests are batched only with requests of the *same* input length, so no
padding ever enters a forward pass: the batched numbers are those of batch size
1 for every encoding, including those whose positions depend on the sequence
length (dynamic NTK). Results come back in request order.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from suite.modeling.kv_cache import KVCache
from suite.modeling.model import Transformer

POLICY = {
    "loglikelihood": "context+continuation left-truncated to the last eval_len inputs; the continuation's bytes "
                     "scored; greedy = argmax reproduces every continuation byte",
    "loglikelihood_rolling": "non-overlapping windows of exactly eval_len inputs (the last may be shorter), no "
                             "carried context; every byte after the first scored once; the first byte (no context) "
                             "is not scored",
    "generate_until": "greedy, one byte at a time over the last eval_len bytes of context+generation; stops at the "
                      "first stop sequence or after max_gen_toks bytes",
}


def encode(text: str) -> list[int]:
    """Bytes of ``text``: UTF-8, with lone surrogates mapping back to the raw bytes they escaped."""
    return list(text.encode("utf-8", "surrogateescape"))


def decode(ids) -> str:
    """Inverse of :func:`encode` for any byte sequence."""
    return bytes(int(i) for i in ids).decode("utf-8", "surrogateescape")


def bytes_as_latin1(data: bytes) -> str:
    """A byte string as a ``str`` that any JSON/Arrow reader carries intact (one char per byte)."""
    return data.decode("latin-1")


def doc_text(doc: dict) -> str:
    """Rolling-task documents: the field ``bytes_latin1`` back to the text the adapter scores.

    Named by ``tasks/lmeval/posbench_rolling.yaml`` (``doc_to_target``). The data files
    hold bytes as Latin-1 characters because a corpus span may cut a UTF-8 character
    (or hold bytes that are not UTF-8), which no JSON reader would keep.
    """
    return decode(doc["bytes_latin1"].encode("latin-1"))


def rolling_results(doc: dict, results) -> dict:
    """``process_results`` of the rolling task: lm-eval's bits_per_byte over the bytes scored.

    lm-eval divides by every byte of the document; the first byte has no context and
    is never scored (see the module docstring), so the count here is ``bytes - 1``.
    """
    (loglikelihood,) = results
    scored = len(doc["bytes_latin1"]) - 1
    return {"bits_per_byte": (loglikelihood, scored), "byte_perplexity": (loglikelihood, scored)}


def _chunks(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _equal_length_batches(lengths: list[int], batch_size: int):
    """Indices grouped by equal length (longest first), each group cut into batches."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and lengths[order[end]] == lengths[order[start]]:
            end += 1
        yield from _chunks(order[start:end], batch_size)
        start = end


@register_model("posbench")
class PosBenchLM(LM):
    """A PosBench model at one eval length. Build it in-process from a model and its
    training length, or from a checkpoint (``checkpoint=...``; then ``train_len`` is
    the run's ``base_len``). ``eval_len`` defaults to the training length;
    the encoding gets scale ``eval_len / train_len`` for every call and 1 after."""

    def __init__(self, model: Transformer | None = None, train_len: int | None = None, *,
                 checkpoint: str | Path | None = None, eval_len: int | None = None, batch_size: int | str = 8,
                 device: str | None = None, max_gen_toks: int = 256, max_batch_size: int | None = None,
                 kv_cache: bool = True):
        super().__init__()
        if (model is None) == (checkpoint is None):
            raise ValueError("give exactly one of model (with train_len) or checkpoint")
        if checkpoint is not None:
            from suite.training.checkpoints import load_checkpoint  # Lightning is imported only when a checkpoint is read

            module = load_checkpoint(Path(checkpoint))
            model, train_len = module.model, module.run.base_len
        if train_len is None:
            raise ValueError("an in-process model needs its train_len")
        self.model = model.eval()
        if device is not None:
            self.model.to(device)
        self._device = next(self.model.parameters()).device
        self.train_len = int(train_len)
        self.eval_len = int(eval_len or train_len)
        if batch_size == "auto":
            raise ValueError("give a batch size: the posbench adapter does not search for one")
        self.batch_size = int(batch_size)  # max_batch_size comes with lm-eval's auto sizing; unused
        self.max_gen_toks = int(max_gen_toks)
        self.kv_cache = bool(kv_cache)  # False: re-read the whole window for every byte (the reference path)
        limit = self.model.encodings[0].max_length()
        if limit is not None and self.eval_len > limit:
            raise ValueError(f"eval length {self.eval_len} is beyond what the encoding can represent ({limit})")

    @property
    def scale(self) -> float:
        return self.eval_len / self.train_len

    @property
    def policy(self) -> dict:
        """What every figure from this adapter depends on besides the model; record it."""
        return {"eval_len": self.eval_len, "train_len": self.train_len, "scale": self.scale, **POLICY}

    def get_model_info(self) -> dict:
        return {"posbench_policy": self.policy}

    @contextmanager
    def _at_eval_scale(self):
        self.model.set_scale(self.scale)
        try:
            with torch.no_grad():  # not inference_mode: encodings cache tables that training may use later
                yield
        finally:
            self.model.set_scale(1)

    # -- scoring -----------------------------------------------------------------
    def _score(self, rows: list[tuple[list[int], list[int]]]) -> list[tuple[float, bool]]:
        """(sum of log p, all greedy) of each row's targets, read at its last len(targets) positions.

        A row is (input ids, target ids); len(targets) <= len(inputs) <= eval_len.
        """
        out: list[tuple[float, bool]] = [(0.0, True)] * len(rows)
        lengths = [len(inp) for inp, _ in rows]
        with self._at_eval_scale():
            for batch in _equal_length_batches(lengths, self.batch_size):
                T = lengths[batch[0]]
                if T == 0:
                    continue
                x = torch.tensor([rows[i][0] for i in batch], device=self._device)  # [b, T]
                logp = F.log_softmax(self.model(x).float(), dim=-1)  # [b, T, V]
                for j, i in enumerate(batch):
                    target = torch.tensor(rows[i][1], device=self._device)  # [k]
                    lp = logp[j, T - len(target) :]  # [k, V]
                    ll = lp.gather(-1, target[:, None]).sum().item()
                    out[i] = (ll, bool((lp.argmax(-1) == target).all()))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        rows = []
        for req in requests:
            context, continuation = req.args[:2]
            ctx, cont = encode(context), encode(continuation)
            if len(cont) > self.eval_len:
                raise ValueError(f"a continuation of {len(cont)} bytes does not fit the eval length {self.eval_len}")
            full = ctx + cont
            scored = cont if ctx else cont[1:]  # a first byte with no context is not scored
            rows.append((full[:-1][-self.eval_len :], scored))
        results = self._score(rows)
        for req, res in zip(requests, results):
            self.cache_hook.add_partial("loglikelihood", req.args, res)
        return results

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        rows, owner = [], []
        for r, req in enumerate(requests):
            tokens = encode(req.args[0])
            for start in range(0, len(tokens) - 1, self.eval_len):
                end = min(start + self.eval_len, len(tokens) - 1)  # inputs [start, end) predict [start + 1, end]
                rows.append((tokens[start:end], tokens[start + 1 : end + 1]))
                owner.append(r)
        totals = [0.0] * len(requests)
        for r, (ll, _) in zip(owner, self._score(rows)):
            totals[r] += ll
        for req, total in zip(requests, totals):
            self.cache_hook.add_partial("loglikelihood_rolling", req.args, total)
        return totals

    # -- generation --------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        jobs = []
        for req in requests:
            context, kwargs = req.args[:2]
            kwargs = dict(kwargs or {})
            if kwargs.get("do_sample") or (kwargs.get("temperature") or 0) > 0:
                raise ValueError("the posbench adapter decodes greedily only (do_sample=False, temperature=0)")
            until = kwargs.get("until") or []
            ctx = encode(context)
            if not ctx:
                raise ValueError("generate_until needs a non-empty context (byte models have no BOS token)")
            jobs.append((ctx[-self.eval_len :], [until] if isinstance(until, str) else list(until),
                         int(kwargs.get("max_gen_toks", self.max_gen_toks))))
        out = [""] * len(jobs)
        with self._at_eval_scale():
            for batch in _equal_length_batches([len(j[0]) for j in jobs], self.batch_size):
                for i, text in zip(batch, self._greedy([jobs[i] for i in batch])):
                    out[i] = text
        for req, text in zip(requests, out):
            self.cache_hook.add_partial("generate_until", req.args, text)
        return out

    def _greedy(self, jobs: list[tuple[list[int], list[str], int]]) -> list[str]:
        """Greedy continuations of equal-length contexts, each cut at its first stop sequence."""
        seqs = torch.tensor([ctx for ctx, _, _ in jobs], device=self._device)  # [b, T]
        generated: list[list[int]] = [[] for _ in jobs]
        done = [max_new <= 0 for _, _, max_new in jobs]
        cache = KVCache() if self.kv_cache and self.model.cacheable else None
        while not all(done):
            if cache is not None and seqs.shape[1] <= self.eval_len:  # the window has not slid: positions hold
                logits = self.model.extend(seqs[:, cache.length :], cache)  # [b, new, V]
            else:
                logits = self.model(seqs[:, -self.eval_len :])  # [b, <= eval_len, V]
            nxt = logits[:, -1].argmax(-1)  # [b]
            seqs = torch.cat([seqs, nxt[:, None]], dim=1)
            for i, (_, until, max_new) in enumerate(jobs):
                if done[i]:
                    continue
                generated[i].append(int(nxt[i]))
                text = decode(generated[i])
                done[i] = len(generated[i]) >= max_new or any(s in text for s in until)
        return [_cut(decode(g), until) for g, (_, until, _) in zip(generated, jobs)]


def _cut(text: str, until: list[str]) -> str:
    """``text`` up to its first stop sequence (exclusive)."""
    ends = [text.find(s) for s in until if s and s in text]
    return text[: min(ends)] if ends else text
