"""The encoding plugin contract, as checks a submitter runs: ``posbench validate --import``.

:func:`contract_problems` builds the encoding into a tiny model and checks what every
encoding promises (the same properties tests/submission/test_contract.py asserts for
the shipped specs): the scale behaviour it declares is the one its description
states, the model takes the attention path its family calls for, outputs have the
right shape in training and evaluation, it is causal (no gradient flows from a
later position to an earlier one's logits), deterministic, every parameter learns,
an optimizer step keeps everything finite, layer sharing is as declared, and an encoding
that says it takes real-valued position ids does.

:func:`smoke_run` then trains it for real: ``suite.training.fit.fit`` (Lightning, CPU or the
GPU there is) on a :class:`~suite.plan.grid.TrainingRun` of a tiny model on the generated
copy task for a few steps, and scores bits per byte of held-out copy examples at 1x and
2x the training length with the extrapolation evaluator's own function. It proves the
encoding trains and evaluates end to end; the figures mean nothing at 20 steps.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from suite.encodings import ScaleBehaviour
from suite.modeling.build import build_model
from suite.modeling.model import EXPLICIT_HOOKS, AttentionPath, ModelConfig, Transformer, attention_path
from suite.encodings.position_transforms import Cape, CapeParams
from suite.specs import EncodingSpec, SizeSpec, TaskSpec, TrainRecipe

CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=16)
L = CFG.train_len

# The fastest exact path of each family. Any encoding may edit the logits through the
# score hook, which is exact only on the explicit path (ReRoPE is rotary and does).
FAMILY_PATH = {"none": AttentionPath.FUSED, "absolute": AttentionPath.FUSED, "rotary": AttentionPath.FUSED,
               "additive": AttentionPath.FUSED, "bias": AttentionPath.FLOAT_MASK, "contextual": AttentionPath.EXPLICIT,
               "decay": AttentionPath.FLOAT_MASK}
STATED = {ScaleBehaviour.EXTRAPOLATE: "extrapolates", ScaleBehaviour.ADJUST: "training-free adjustment",
          ScaleBehaviour.NOT_APPLICABLE: "not applicable"}


class ContractError(AssertionError):
    pass


def seeded_model(spec: EncodingSpec, seed: int = 0, cfg: ModelConfig = CFG) -> Transformer:
    """The model training builds (suite.modeling.build), its weights drawn from ``seed``."""
    torch.manual_seed(seed)
    return build_model(spec, cfg)


def lengths(model: Transformer) -> list[int]:
    """The training length, and twice it where the encoding can represent it."""
    limit = model.encodings[0].max_length()
    return [T for T in (L, 2 * L) if limit is None or T <= limit]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ContractError(message)


def check_scale_behaviour(spec: EncodingSpec) -> None:
    encoding = seeded_model(spec).encodings[0]
    behaviour = encoding.scale_behaviour
    _require(isinstance(behaviour, ScaleBehaviour), f"scale_behaviour must be a ScaleBehaviour, got {behaviour!r}")
    _, _, stated = " ".join(spec.description.split()).lower().partition("scale behaviour: ")
    _require(stated.startswith(STATED[behaviour]),
             f"declares {behaviour.value}: the description must say 'Scale behaviour: {STATED[behaviour]} ...'")
    if behaviour is ScaleBehaviour.NOT_APPLICABLE:
        _require(encoding.max_length() is not None, "not applicable beyond some length, but max_length() is None")


def expected_path(spec: EncodingSpec, encoding) -> AttentionPath:
    """The path a layer with this encoding instance must take: a wrapper's or a schedule's
    is that of the encoding it holds (``inner``), with its window; an encoding that edits
    the logits or the softmax (the logits, score, sink or normalize hooks) takes the explicit
    path; else its family's."""
    inner = getattr(encoding, "inner", None)
    if spec.family in ("wrapper", "hybrid") and inner is not None:
        return attention_path(inner.active_hooks(), encoding.attention_window)
    if EXPLICIT_HOOKS & encoding.active_hooks():  # at this scale (dynamic scaling edits the logits only beyond L)
        return AttentionPath.EXPLICIT
    return FAMILY_PATH[spec.family]


def check_attention_path(spec: EncodingSpec) -> None:
    model = seeded_model(spec)
    expected = [expected_path(spec, model.encoding_for(i)) for i in range(CFG.n_layers)]
    _require(model.paths == expected, f"family {spec.family} takes the {'+'.join(p.value for p in expected)} path "
                                      f"per layer; its hooks {sorted(type(model.encodings[0]).hooks())} give "
                                      f"{'+'.join(p.value for p in model.paths)}")


def check_output_shape(spec: EncodingSpec) -> None:
    """Logits [B, T, V], all finite, in training and evaluation, at L and 2L."""
    for mode in ("train", "eval"):
        model = seeded_model(spec).train(mode == "train")
        for T in lengths(model):
            model.set_scale(T / L)
            logits = model(torch.randint(0, 256, (2, T)))
            _require(tuple(logits.shape) == (2, T, CFG.vocab_size), f"{mode}: logits of shape {tuple(logits.shape)} at length {T}")
            _require(bool(torch.isfinite(logits).all()), f"{mode}: non-finite logits at length {T}")


def check_causal(spec: EncodingSpec) -> None:
    """d logits[:, t] / d input embeddings[:, t'] is exactly 0 for every t' > t."""
    for mode in ("train", "eval"):
        model = seeded_model(spec).train(mode == "train")
        captured = {}
        model.tok.register_forward_hook(lambda module, args, out: captured.__setitem__("emb", out))
        gen = torch.Generator().manual_seed(1)
        for T in lengths(model):
            model.set_scale(T / L)
            torch.manual_seed(2)
            logits = model(torch.randint(0, 256, (1, T), generator=gen))
            weights = torch.randn(T, CFG.vocab_size, generator=gen)
            for t in range(T):
                (grad,) = torch.autograd.grad((logits[0, t] * weights[t]).sum(), captured["emb"], retain_graph=True)
                _require(bool(torch.isfinite(grad).all()), f"{mode}: non-finite gradients (T={T})")
                _require(torch.count_nonzero(grad[0, t + 1:]) == 0, f"{mode}: position {t} sees the future (T={T})")
                _require(grad[0, t].abs().sum() > 0, f"{mode}: position {t} does not see itself (T={T})")


def check_deterministic(spec: EncodingSpec) -> None:
    idx = torch.randint(0, 256, (2, L))
    for mode in ("train", "eval"):
        def run():
            model = seeded_model(spec, seed=3).train(mode == "train")
            torch.manual_seed(4)  # e.g. randomized positions draw from the global generator in training
            return model(idx)

        _require(torch.equal(run(), run()), f"{mode}: two identical runs give different logits")


def check_every_parameter_learns(spec: EncodingSpec) -> None:
    model = seeded_model(spec).train()
    idx = torch.randint(0, 256, (2, L + 1))
    F.cross_entropy(model(idx[:, :-1]).transpose(1, 2), idx[:, 1:]).backward()
    for name, p in model.named_parameters():
        _require(p.grad is not None and p.grad.abs().sum() > 0, f"parameter {name} gets no gradient")


def check_optimizer_step_finite(spec: EncodingSpec) -> None:
    model = seeded_model(spec).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(2):
        idx = torch.randint(0, 256, (2, L + 1))
        loss = F.cross_entropy(model(idx[:, :-1]).transpose(1, 2), idx[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    _require(all(torch.isfinite(p).all() for p in model.parameters()), "a parameter is not finite after two AdamW steps")
    model.eval()
    for T in lengths(model):
        model.set_scale(T / L)
        _require(bool(torch.isfinite(model(torch.randint(0, 256, (1, T)))).all()), f"non-finite logits at length {T}")


def check_layer_sharing(spec: EncodingSpec) -> None:
    """per_layer encodings get one instance per layer; shared ones compute a bias once per forward."""
    model = seeded_model(spec)
    first = model.encodings[0]
    _require(len(model.encodings) == (CFG.n_layers if type(first).per_layer else 1),
             f"{len(model.encodings)} encoding instances for {CFG.n_layers} layers (per_layer={type(first).per_layer})")
    if "bias" in type(first).hooks() and not type(first).per_layer:
        calls = []
        original = first.bias
        first.bias = lambda q, k: calls.append(1) or original(q, k)
        model(torch.randint(0, 256, (1, 8)))
        _require(calls == [1], f"a shared bias was computed {len(calls)} times in one forward")


def check_continuous_positions(spec: EncodingSpec) -> None:
    """An encoding that says ``continuous_positions`` takes real-valued ids: integer ids
    given as reals (CAPE with nothing to draw) give its logits on the integer ids, and
    CAPE's shifted and scaled ids give finite logits. Others have nothing to check."""
    model = seeded_model(spec).train()
    if not type(model.encodings[0]).continuous_positions:
        return
    idx = torch.randint(0, 256, (2, L))
    model.position_transform = None  # integer ids 0 .. T-1 (the spec's own transform would draw shifts)
    torch.manual_seed(5)
    integer = model(idx)
    model.position_transform = Cape(CapeParams())
    torch.manual_seed(5)
    _require(torch.allclose(model(idx), integer, atol=1e-5), "integer ids given as reals change the logits")
    model.position_transform = Cape(CapeParams(max_global_shift=100.0, max_local_shift=0.5, max_global_scaling=1.4))
    _require(bool(torch.isfinite(model(idx)).all()), "non-finite logits on shifted, scaled real ids")


CHECKS = {"scale behaviour": check_scale_behaviour, "attention path": check_attention_path,
          "output shape and finite": check_output_shape, "causal": check_causal, "deterministic": check_deterministic,
          "every parameter learns": check_every_parameter_learns,
          "optimizer step stays finite": check_optimizer_step_finite, "layer sharing": check_layer_sharing,
          "continuous positions": check_continuous_positions}


def contract_problems(spec: EncodingSpec) -> list[str]:
    """One line per contract check that fails (an exception inside a check is a failure)."""
    problems = []
    for name, check in CHECKS.items():
        try:
            torch.manual_seed(0)
            check(spec)
        except ContractError as exc:
            problems.append(f"contract: {name}: {exc}")
        except Exception as exc:
            problems.append(f"contract: {name}: raised {type(exc).__name__}: {exc}")
    return problems


# -- the smoke run ------------------------------------------------------------------------

SMOKE_SIZE = SizeSpec(name="smoke", d_model=32, n_layers=2, n_heads=4, d_ff=64)
SMOKE_TASK = TaskSpec(name="copy", kind="synthetic", generator="copy", min_train_len=8)
SMOKE_RECIPE = TrainRecipe(steps=20, batch_size=8, seq_len=32, lr=3e-3, warmup_steps=2)


@dataclass(frozen=True)
class Smoke:
    final_loss: float
    bpb: dict  # scale -> bits per byte on held-out copy examples (None: not applicable)
    wall_s: float


def smoke_run(spec: EncodingSpec) -> Smoke:
    """Train ``spec`` for a few steps with suite.training.fit.fit and score it at 1x and 2x (see the
    module docstring); raises suite.training.fit.TrainingFailed or the evaluation's exception."""
    import logging
    import time

    from suite.data.synthetic import generate
    from suite.evaluation.evaluators.extrapolation import evaluate_lm_at
    from suite.plan.grid import TrainingRun
    from suite.plan.task_kinds import kind_of
    from suite.training.fit import fit

    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)
    start, threads = time.perf_counter(), torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small is fastest on one thread, and never fights others for cores
    try:
        run = TrainingRun(spec, SMOKE_SIZE, SMOKE_TASK, 0, SMOKE_RECIPE, kind_of(SMOKE_TASK).fingerprint(SMOKE_TASK))
        with tempfile.TemporaryDirectory(prefix="posbench-smoke-") as tmp:
            # checkpoints/ inside: the run's resume points go beside it (../hpc/), inside the temporary folder too
            result = fit(run, Path(tmp) / "checkpoints", progress_bar=False)
        model = result.module.model.eval()
        held_out = "".join(e.text for e in generate("copy", 64, SMOKE_RECIPE.seq_len + 1, seed=12345))
        tokens = torch.tensor(list(held_out.encode()), dtype=torch.uint8)
        bpb = {}
        for scale in (1, 2):
            (row,), _ = evaluate_lm_at(model, tokens, SMOKE_RECIPE.seq_len, scale, 1024, 8, 4, task="copy")
            if row.status not in ("ok", "not_applicable"):
                raise FloatingPointError(f"bits per byte at {scale}x: {row.status} (not a finite number)")
            bpb[scale] = row.value
    finally:
        torch.set_num_threads(threads)
    return Smoke(result.stats["final_train_loss"], bpb, time.perf_counter() - start)
