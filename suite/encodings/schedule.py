"""Per-layer schedules: each layer its own encoding and attention window.

Hybrid layouts are how 2025's long-context models place positions: Llama 4's iRoPE
interleaves NoPE layers with global attention among RoPE layers with chunked attention
(Meta 2025, "The Llama 4 herd"), and RNoPE-SWA puts NoPE with full attention every
fourth layer and RoPE with a sliding window in the others (Yang et al. 2025, "Rope to
Nope and Back Again: A New Hybrid Attention Strategy", Sec. 4). A schedule is an
ordinary encoding whose class says ``per_layer``, so the model builds one instance per
layer and tells it its layer (``dims.layer``); the instance builds the layer's own
encoding from the schedule's pattern and delegates every hook to it, and says the
layer's window through :attr:`~suite.encodings.base.PositionalEncoding.attention_window`.
The model stays free of encoding names: it reads each layer's hooks and window and picks
that layer's attention path (fused for NoPE with full attention, a float mask for a
windowed layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from suite.encodings.base import ENCODINGS, AttentionWindow, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.wrapper import build_inner, checked_inner


@dataclass(frozen=True)
class LayerEncoding:
    """One entry of a schedule's pattern: an encoding given in full and its window."""

    impl: str  # a registered encoding implementation (or module:Class / file.py:Class)
    params: dict[str, Any] = field(default_factory=dict)  # its params, in full (part of the run id)
    window: int | None = None  # attention window in tokens; None: every earlier key
    window_kind: Literal["sliding", "chunked"] = "sliding"

    def __post_init__(self):
        cls = checked_inner(self.impl, self.params, Schedule, label="impl")
        if "embed" in cls.hooks():
            raise ValueError(f"{self.impl}: an absolute encoding acts once at the input, not in a layer; "
                             "it cannot be scheduled per layer")
        if cls.positions is not PositionalEncoding.positions:
            raise ValueError(f"{self.impl}: an encoding with its own position ids cannot be scheduled per layer "
                             "(every layer reads the same ids)")
        if self.window is not None:
            AttentionWindow(self.window, self.window_kind)  # its own checks

    def build(self, dims: ModelDims) -> PositionalEncoding:
        return build_inner(self.impl, self.params, dims)


@dataclass(frozen=True)
class ScheduleParams:
    # The pattern, repeated over the layers: layer i takes layers[i % len(layers)]; by
    # default RNoPE-SWA's (three windowed RoPE layers, then a global NoPE layer).
    layers: tuple[LayerEncoding, ...] = field(default_factory=lambda: (
        *[LayerEncoding("rotary", {}, 16)] * 3, LayerEncoding("none")))

    def __post_init__(self):
        if not self.layers:
            raise ValueError("a schedule needs at least one layer entry")
        # a spec gives the entries as mappings (YAML); the dataclass holds them typed
        entries = tuple(LayerEncoding(**e) if isinstance(e, dict) else e for e in self.layers)
        object.__setattr__(self, "layers", entries)


@ENCODINGS.register("schedule")
class Schedule(PositionalEncoding):
    """Layer ``dims.layer`` runs ``params.layers[layer % len(layers)]``: its encoding's hooks,
    with its window. Scale behaviour: each layer's encoding's (a schedule of RoPE and
    NoPE layers extrapolates as it is); the spec's description states layer 0's, which
    the contract check reads."""

    Params = ScheduleParams
    per_layer = True

    def __init__(self, params: ScheduleParams, dims: ModelDims):
        super().__init__(params, dims)
        self.entry = params.layers[(dims.layer or 0) % len(params.layers)]
        self.inner = self.entry.build(dims)
        self._window = None if self.entry.window is None else AttentionWindow(self.entry.window, self.entry.window_kind)

    # -- what the model asks: this layer's encoding's answers ----------------------
    def active_hooks(self) -> frozenset[str]:
        return self.inner.active_hooks()

    @property
    def attention_window(self) -> AttentionWindow | None:
        return self._window

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return self.inner.scale_behaviour

    @property
    def cacheable(self) -> bool:
        return self.inner.cacheable

    def max_length(self) -> int | None:
        return self.inner.max_length()

    def set_scale(self, scale: float) -> None:
        super().set_scale(scale)
        self.inner.set_scale(scale)

    # -- the hooks: delegated (the model calls only those active_hooks() names) --------
    def rotate(self, q, k, q_pos, k_pos):
        return self.inner.rotate(q, k, q_pos, k_pos)

    def bias(self, q_pos, k_pos):
        return self.inner.bias(q_pos, k_pos)

    def logits(self, q, k, x, q0, k0):
        return self.inner.logits(q, k, x, q0, k0)

    def score(self, q, k, scores, q_pos, k_pos):
        return self.inner.score(q, k, scores, q_pos, k_pos)

    def decay(self, x):
        return self.inner.decay(x)

    def sink(self):
        return self.inner.sink()

    def normalize(self, scores, q0, k0):
        return self.inner.normalize(scores, q0, k0)

    def gate(self, y, x):
        return self.inner.gate(y, x)

    def canon(self, site, h):
        return self.inner.canon(site, h)

    def mixer(self, x):
        return self.inner.mixer(x)

    def extra_repr(self) -> str:
        window = "" if self._window is None else f", window={self._window.kind} {self._window.size}"
        return f"layer={self.dims.layer}: {self.entry.impl}{window}"

