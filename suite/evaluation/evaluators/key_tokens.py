"""Key-token bits per byte (LongPPL, offline mode): the loss on the tokens that need long context, at s x L.

Fang et al. 2025 ("What is Wrong with Perplexity for Long-context Language Modeling?", ICLR
2025, Sec. 3; code ``PKU-ML/LongPPL`` at 1decd2a, ``longppl/longppl.py``: ``find_key_token``,
``compute_longppl``) observe that perplexity averages over every token, most of which a short
context predicts as well as a long one, so it hides whether a model uses its long context. They
score a token x_i of a text x by an evaluator model's

    LSD(x_i) = log p(x_i | x_{<i}) - log p(x_i | x_{i-K..i-1})   (long-short difference)
    LCL(x_i) = log p(x_i | x_{<i})                                 (long-context likelihood)

(natural logarithms; K the truncation length), call x_i a key token when LSD > alpha and LCL >
beta (alpha = 2, beta = -2 nats per token: ``find_key_token``'s defaults; here alpha = 0.5
nats per byte, a quarter of theirs, and beta = -2: see ``BYTES_PER_TOKEN``), and report the compared model's
perplexity on the key tokens only, LongPPL = exp(-(1/|key|) sum_{i in key} log p_model(x_i | x_{<i})).

Their evaluator is a large LLM (Qwen2-72B-Instruct, Mistral Large 2 or Llama-3.1-8B: the key
tokens their repository ships) with K = 4096 against texts of up to 32,768 tokens (``perplexity.py``'s
``--trunc-len`` and ``--max-length``), and the short context is shared by ``sliding_window`` tokens
(1024) to save forwards (their code cannot run with 1: its ``.squeeze()`` makes a one-token mask
0-d); in their offline mode the evaluator picks the key tokens once and every compared model is
scored on them. This evaluator is that offline mode at PosBench's scale:

* the evaluator model is a fixed reference the project trains (``grids/key-token-reference.yaml``:
  RoPE, size tiny, trained at 1024 = the longest length evaluated, so its long context needs no
  extrapolation), and ``scripts/key_tokens.py`` writes its choice to ``tasks/key_tokens/<task>.json``;
* K is the compared models' training length L = 64, computed exactly for every token (a forward
  of the reference over the token's own truncated window of its previous K bytes; no sliding
  window), and the long context is the evaluation window of s x L the token is in, the windows of
  the ``extrapolation`` evaluator (:func:`~suite.evaluation.evaluators.extrapolation.evaluation_span`),
  so a token can be key only where its window gives it more than K bytes of context: none at 1x;
* the figure is ``key_bpb``, the compared model's mean bits per byte over the key tokens (log2
  of LongPPL, per byte), with ``n`` the number of key tokens scored. Beside ``bpb`` it tells a
  model that is better on average from one that is better where the context matters.

Key tokens are chosen on one corpus: the evaluator refuses a corpus whose fingerprint is not the
file's, and the file (committed data, read as untrusted input) is validated when it is read.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from suite.core.boundary.bounded import Bounds, Refused, read_json
from suite.evaluation.base import EvalContext, EvalResult, fits
from suite.evaluation.evaluators.extrapolation import LN2, evaluation_span, per_token_bits
from suite.plan.evaluators import EVALUATORS, Evaluator, Settings
from suite.plan.task_kinds import kind_of
from suite.results.rows import MetricRow

AUTHORS_ALPHA, AUTHORS_BETA = 2.0, -2.0  # find_key_token's defaults (PKU-ML/LongPPL, longppl/longppl.py), nats per token
# PosBench models bytes: the authors' thresholds are per token of their evaluators' tokenizers, about
# 4 bytes of English or code per token (Llama's and Qwen's), so a byte-level model's per-byte loss
# moves about a quarter as much where a token's would move by alpha: alpha here is a quarter of theirs.
# At their per-token values the tiny reference found 1 key byte of 16,384 at 16x (its long-minus-short
# gain: median 0.002 nats, 99.9th percentile 1.8). beta keeps their value: a quarter of it (a byte
# predicted at p > 0.61 with the long context) left 10 key bytes at 16x, since the tiny reference is
# rarely that sure (2.49 bits per byte on average). Departures from the paper, stated on the board.
BYTES_PER_TOKEN = 4
ALPHA, BETA = AUTHORS_ALPHA / BYTES_PER_TOKEN, AUTHORS_BETA  # nats per byte
WINDOW_POLICY = ("non-overlapping windows of exactly eval_len (extrapolation's); only the key tokens of the "
                 "reference's file scored")
MAX_FILE_BYTES = 64 * 2**20  # far above any grid's key tokens; a bigger file is not ours
MAX_SPAN = 2**24


class KeyTokenFileError(ValueError):
    """A key-token file that cannot be used: which file, which field, and why."""


# --- the selection (the reference's side) -------------------------------------------------------

def key_token_mask(long_logp: torch.Tensor, short_logp: torch.Tensor, alpha: float, beta: float,
                   short_context: int) -> torch.Tensor:
    """Which targets are key tokens: [..., T] log-probabilities (natural) of target j given the
    window's tokens 0..j (long) and given only the ``short_context`` tokens before it (short) ->
    bool [..., T]. As ``find_key_token``: LSD > alpha and LCL > beta, for the targets with at
    least ``short_context`` tokens of context (j >= short_context - 1); ``short_logp`` is not
    read elsewhere."""
    T = long_logp.shape[-1]
    eligible = torch.arange(T, device=long_logp.device) >= short_context - 1
    return eligible & ((long_logp - short_logp) > alpha) & (long_logp > beta)


@torch.no_grad()
def short_log_probs(model, span: torch.Tensor, short_context: int, batch_size: int) -> torch.Tensor:
    """log p(target t | its previous ``short_context`` tokens only) for every target t of
    ``span`` (targets are ``span[1:]``, as :func:`per_token_bits`): one forward per target over
    its own truncated window, batched; NaN for the first ``short_context - 1`` targets, which
    have fewer tokens before them. -> float [len(span) - 1]."""
    import torch.nn.functional as F

    K, device = short_context, next(model.parameters()).device
    rows = span.long().unfold(0, K + 1, 1)  # [N - K + 1, K + 1]: row r is inputs span[r:r+K], target span[r+K]
    out = [torch.full((K - 1,), float("nan"))]
    for i in range(0, len(rows), batch_size):
        chunk = rows[i: i + batch_size].to(device)
        logits = model(chunk[:, :-1])[:, -1].float()  # the last position: the target after the K tokens
        out.append(-F.cross_entropy(logits, chunk[:, -1], reduction="none").cpu())
    return torch.cat(out)


# --- the file -----------------------------------------------------------------------------------

Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{8,64}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reference(_Strict):
    """The model that chose the key tokens: its run, the grid that trains it, its recipe."""

    run_id: Hex
    grid: str = Field(max_length=200)
    encoding: str = Field(max_length=100)
    size: str = Field(max_length=100)
    seed: int = Field(ge=0)
    train: dict[str, int | float | bool | str]  # the recipe as trained (suite.specs.TrainRecipe's fields set)
    bpb: float | None = Field(None, ge=0, le=8)  # its own bits per byte at its length, for the record


class ScaleKeys(_Strict):
    """The key tokens at one scale: flat indices ``w * eval_len + j`` into the targets of the
    evaluation span's windows (target j of window w, predicted from the window's tokens 0..j)."""

    scale: int = Field(ge=1, le=1024)
    eval_len: int = Field(gt=0, le=MAX_SPAN)
    windows: int = Field(gt=0, le=MAX_SPAN)
    indices: list[Annotated[int, Field(ge=0, lt=MAX_SPAN)]] = Field(max_length=MAX_SPAN)

    @model_validator(mode="after")
    def _in_windows(self):
        if any(b <= a for a, b in zip(self.indices, self.indices[1:])):
            raise ValueError("indices must be strictly increasing")
        if self.indices and self.indices[-1] >= self.windows * self.eval_len:
            raise ValueError(f"index {self.indices[-1]} is beyond the {self.windows} windows of {self.eval_len}")
        return self


class KeyTokenFile(_Strict):
    """``tasks/key_tokens/<task>.json``, written by ``scripts/key_tokens.py``."""

    format: Literal[1]
    task: str = Field(max_length=100)
    corpus_fingerprint: Hex
    reference: Reference
    alpha: float = Field(gt=0, le=100)  # LSD threshold, nats
    beta: float = Field(ge=-100, le=0)  # LCL threshold, nats
    short_context: int = Field(gt=0, le=MAX_SPAN)  # K: the compared models' training length L
    train_len: int = Field(gt=0, le=MAX_SPAN)  # L: what scale 1 means
    tokens: int = Field(gt=0, le=MAX_SPAN)  # the evaluation span's budget (extrapolation's ``tokens``)
    scales: list[ScaleKeys] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _consistent(self):
        if len({s.scale for s in self.scales}) != len(self.scales):
            raise ValueError("a scale is listed twice")
        for s in self.scales:
            if s.eval_len != s.scale * self.train_len:
                raise ValueError(f"scale {s.scale}: eval_len {s.eval_len} is not {s.scale} x train_len {self.train_len}")
            if s.windows > max(1, self.tokens // s.eval_len):
                raise ValueError(f"scale {s.scale}: {s.windows} windows, more than a budget of {self.tokens} tokens "
                                 f"makes {max(1, self.tokens // s.eval_len)} of {s.eval_len}")
            short = [i for i in s.indices if i % s.eval_len < self.short_context - 1]
            if short:
                raise ValueError(f"scale {s.scale}: index {short[0]} has less than short_context "
                                 f"{self.short_context} tokens of context in its window")
        return self

    def at(self, scale: int) -> ScaleKeys | None:
        return next((s for s in self.scales if s.scale == scale), None)


def _where(loc) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def read_key_tokens(path: Path) -> KeyTokenFile:
    """The validated file, or :class:`KeyTokenFileError` naming the file and the field."""
    path = Path(path)
    if not path.is_file():
        raise KeyTokenFileError(f"{path}: no key-token file (scripts/key_tokens.py writes it)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise KeyTokenFileError(f"{path}: {path.stat().st_size} bytes, more than a key-token file's {MAX_FILE_BYTES}")
    try:  # the boundary's bounded reader (no link, no FIFO, nesting and strings bounded)
        doc = read_json(path, Bounds(bytes=MAX_FILE_BYTES, line=MAX_FILE_BYTES, records=1))
    except Refused as exc:
        raise KeyTokenFileError(f"{path}: {'not JSON (' + str(exc) + ')' if 'JSON' in str(exc) else exc}") from None
    try:
        return KeyTokenFile.model_validate(doc, strict=True)  # no "5" for 5, no true for 1
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise KeyTokenFileError(f"{path}: {problems}") from None


def key_token_path(file: str, task: str, evaluation) -> Path:
    """The settings' ``file`` with ``{task}`` filled in, in the project of the evaluation's encoding
    spec (the folder holding ``encodings/``), else the working directory; inside its
    ``tasks/key_tokens/`` or refused."""
    from suite.specs import spec_project_root

    path = Path(file.replace("{task}", task))  # no str.format: a setting from a record is not a format string
    source = getattr(evaluation.encoding, "source", "") or getattr(evaluation.run.encoding, "source", "")
    root = (spec_project_root(Path(source)) if source else Path.cwd()).resolve()
    resolved = (root / path).resolve()
    if path.is_absolute() or not resolved.is_relative_to(root / "tasks" / "key_tokens"):
        raise KeyTokenFileError(f"{file}: a key-token file lies in the project's tasks/key_tokens/")
    return resolved


# --- the evaluator ------------------------------------------------------------------------------

def key_bits(bits: torch.Tensor, indices: list[int]) -> tuple[float, int, float | None]:
    """(mean bits over the key targets, their number, its standard error over windows) of
    ``bits`` [W, T] at the flat ``indices``: windows are the independent units, so the error is
    the ratio estimator's (each window's key bits over its key count)."""
    flat = bits.reshape(-1)
    idx = torch.tensor(indices, dtype=torch.long)
    value = flat[idx].mean().item()
    W, T = bits.shape
    per_window = torch.zeros(W, dtype=torch.float64).index_add_(0, idx // T, flat[idx].double())
    counts = torch.bincount(idx // T, minlength=W).double()
    if W < 2:
        return value, len(indices), None
    residual = per_window - value * counts
    stderr = math.sqrt((residual ** 2).sum().item() / (W * (W - 1))) / counts.mean().item()
    return value, len(indices), stderr


class KeyTokenSettings(Settings):
    # relative to the project root, under tasks/key_tokens/: a setting travels in records from anyone
    # (verify re-runs them), so it names one of the project's key-token files, never any other path
    file: str = Field("tasks/key_tokens/{task}.json", pattern=r"^tasks/key_tokens/(\{task\}|[A-Za-z0-9_-]{1,100})\.json$")
    tokens: int = Field(16384, gt=0)  # the evaluation span's budget: must be the file's
    batch_size: int = Field(8, gt=0)


@EVALUATORS.register("key_tokens")
class KeyTokens(Evaluator):
    """Bits per byte on the key tokens a fixed reference chose (LongPPL's offline mode), at s x L."""

    Settings = KeyTokenSettings

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        s, task, scale, eval_len = context.settings, context.task.name, context.evaluation.scale, context.eval_len

        def not_applicable(policy=WINDOW_POLICY):
            return EvalResult([MetricRow.not_applicable(task, "key_bpb", scale, eval_len, window_policy=policy)])

        if not kind_of(context.task).reads_corpus or not fits(model, eval_len):  # a generated task reads no corpus
            return not_applicable()
        from suite.data.corpus import load_corpus

        path = key_token_path(s.file, task, context.evaluation)
        keys = read_key_tokens(path)
        corpus = load_corpus(context.task.corpus)
        if keys.corpus_fingerprint != corpus.fingerprint:
            raise KeyTokenFileError(f"{path}: chosen on corpus {keys.corpus_fingerprint}, but task {task}'s corpus is "
                                    f"{corpus.fingerprint} ({corpus.description}): run scripts/key_tokens.py again")
        if (keys.task, keys.tokens, keys.train_len) != (task, s.tokens, context.train_len):
            raise KeyTokenFileError(f"{path}: chosen for task {keys.task}, {keys.tokens} tokens, L = {keys.train_len}; "
                                    f"this evaluation is task {task}, {s.tokens} tokens, L = {context.train_len}")
        at = keys.at(scale)
        if at is None:
            raise KeyTokenFileError(f"{path}: no key tokens at scale {scale} (it has {[k.scale for k in keys.scales]})")
        span = evaluation_span(corpus["test"], s.tokens, eval_len)
        if len(span) - 1 != at.windows * eval_len:
            raise KeyTokenFileError(f"{path}: scale {scale} has {at.windows} windows, the test split gives "
                                    f"{(len(span) - 1) // eval_len}")
        policy = f"{WINDOW_POLICY}: reference run {keys.reference.run_id}, alpha {keys.alpha}, beta {keys.beta}, K {keys.short_context}"
        if not at.indices:  # 1x: no token has more context than K
            return not_applicable(policy)
        model.eval()
        model.set_scale(scale)
        try:
            bits = per_token_bits(model, span, eval_len, s.batch_size)  # [W, T]
        finally:
            model.set_scale(1)
        value, n, stderr = key_bits(bits, at.indices)
        return EvalResult([MetricRow(task=task, metric="key_bpb", value=value, n=n, scale=scale, eval_len=eval_len,
                                     stderr=stderr, window_policy=policy)])


def choose_key_tokens(reference, test: torch.Tensor, train_len: int, scales, tokens: int, short_context: int,
                      alpha: float = ALPHA, beta: float = BETA, batch_size: int = 8) -> list[dict]:
    """The key tokens of the reference model at every scale (``scales`` entries of the file):
    long log-probabilities from its forward over each evaluation window, short ones from
    :func:`short_log_probs` over the same span (a target's truncated window does not depend on
    the scale, so they are computed once)."""
    longest = max(scales) * train_len
    span = evaluation_span(test, tokens, longest)
    if any(len(evaluation_span(test, tokens, s * train_len)) != len(span) for s in scales):
        raise ValueError(f"{tokens} tokens are not a multiple of every eval length: the scales would score different spans")
    reference.eval()
    short = short_log_probs(reference, span, short_context, batch_size)
    out = []
    for s in sorted(scales):
        T = s * train_len
        long = -per_token_bits(reference, span, T, batch_size).double() * LN2  # [W, T] nats
        mask = key_token_mask(long, short.view(-1, T).double(), alpha, beta, short_context)
        out.append({"scale": s, "eval_len": T, "windows": long.shape[0],
                    "indices": mask.reshape(-1).nonzero().squeeze(1).tolist()})
    return out
