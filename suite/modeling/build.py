"""The one model builder: an encoding spec and a model shape in, a fresh model out.

Training, GLUE-style fine-tuning, the bench, the plugin contract's checks and smoke run,
and the limits check (on torch's meta device) all build their models here, so what they
measure is the model that training trains.
"""

from __future__ import annotations

from suite.encodings.position_transforms import build_transform
from suite.modeling.model import ModelConfig, Transformer
from suite.specs import EncodingSpec, SizeSpec


def model_config(size: SizeSpec, train_len: int, extension_factor: float = 1.0) -> ModelConfig:
    return ModelConfig(d_model=size.d_model, n_layers=size.n_layers, n_heads=size.n_heads, d_ff=size.d_ff,
                       train_len=train_len, extension_factor=extension_factor, init=size.init)


def run_model_config(run) -> ModelConfig:
    """The model shape of a training run (suite.plan.grid.TrainingRun): scale 1 is its base
    length, and a fine-tuned extension keeps the factor it trains at."""
    return model_config(run.size, run.base_len, run.extension_factor)


def build_model(encoding: EncodingSpec, cfg: ModelConfig) -> Transformer:
    """A fresh model of shape ``cfg`` with ``encoding``, and its training-time position
    transform where the spec has one (PoSE, CAPE: suite.encodings.position_transforms)."""
    impl, params = encoding.implementation(), encoding.resolved_params()
    transform = None
    if encoding.train_positions is not None:
        transform = build_transform(encoding.train_positions.impl, encoding.train_positions.params)
    return Transformer(cfg, lambda dims: impl(params, dims), position_transform=transform)
