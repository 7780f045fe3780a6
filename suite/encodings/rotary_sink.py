"""RoPE with a learned attention sink per head (gpt-oss): :class:`RotarySink`."""

from __future__ import annotations

import torch

from suite.encodings.base import ENCODINGS, ModelDims
from suite.encodings.rotary import Rotary, RotaryParams


@ENCODINGS.register("rotary_sink")
class RotarySink(Rotary):
    """RoPE with a learned attention sink per head, as gpt-oss runs it (OpenAI 2025, gpt-oss-120b
    and gpt-oss-20b model card: a learned bias per head in the softmax's denominator;
    reference: transformers==5.23.0 ``GptOssAttention.sinks`` with its
    ``eager_attention_forward``): logits of a query over its keys and one more column, the
    head's sink logit, go through one softmax, and the sink's share is dropped, so a head can
    attend to nothing (Xiao et al. 2024, StreamingLLM, found models spend that share on the
    first tokens when they have no sink). The sinks are parameters [H], drawn as transformers
    initialises them (normal, std 0.02); they take no weight decay (the optimizer's rule for
    parameters of one dimension). The rotation is :class:`Rotary`'s; the sink needs the
    explicit attention path."""

    cacheable = True  # the sink does not depend on which keys are held

    def __init__(self, params: RotaryParams, dims: ModelDims):
        super().__init__(params, dims)
        self.sinks = torch.nn.Parameter(torch.empty(dims.n_heads).normal_(0.0, 0.02))

    def sink(self) -> torch.Tensor:
        return self.sinks
