"""How a model's weights start: a size's ``init`` (``sizes/*.yaml``).

- ``"gpt2"``: GPT-2's (Radford et al. 2019): every linear and embedding weight N(0, 0.02^2), the
  residual projections scaled by 1/sqrt(2 * n_layers), the output head tied to the embedding.
  0.02 was chosen for width 768; every published run before sizes had an ``init`` used it.
- ``"pytorch"``: the modules' own defaults (nn.Embedding N(0, 1), nn.Linear uniform with bound
  1/sqrt(fan_in)) and an untied output head. At width 64 the token embedding is then 50x
  GPT-2's, and the attention weights 3-4x: content lookups (induction heads, Olsson et al.
  2022) form within about a thousand steps where GPT-2's scale sat on a plateau at chance for
  ten thousand (docs/concepts/tasks.md, "Task recipes and learning curves": MQAR). Untied, because an N(0, 1) embedding read back
  as the output head would start the logits at std ~8.
"""

from __future__ import annotations

import math

from torch import nn

INIT_SCHEMES = ("gpt2", "pytorch")
GPT2_STD = 0.02  # every GPT-2 weight's std (the residual projections' divided further)
TOKEN_EMBEDDING_STD = {"gpt2": GPT2_STD, "pytorch": 1.0}  # nn.Embedding's default is N(0, 1)


def initialise(model: nn.Module, scheme: str) -> None:
    """Start a freshly built Transformer's token embedding, blocks and head by ``scheme``;
    the encodings initialise their own parameters and are left alone."""
    if scheme == "pytorch":
        return  # the modules' own initialisation, head untied
    model.head.weight = model.tok.weight  # weight tying, as in GPT-2
    for part in (model.tok, model.blocks):
        part.apply(_gpt2_weights)
    for block in model.blocks:  # GPT-2: residual projections scaled by 1/sqrt(2 * n_layers)
        for proj in (block.mlp[2],) if block.attn is None else (block.attn.out, block.mlp[2]):
            nn.init.normal_(proj.weight, std=GPT2_STD / math.sqrt(2 * len(model.blocks)))


def _gpt2_weights(module: nn.Module) -> None:
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=GPT2_STD)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
