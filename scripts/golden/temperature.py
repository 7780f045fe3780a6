"""Golden query temperatures, computed by the reference code where it can run here.

* llama4: transformers==5.23.0, ``Llama4TextAttention.forward``: the statement
  ``attn_scales = (torch.log1p(torch.floor((positions.float() + 1.0) / self.floor_scale))
  * self.attn_scale + 1.0)`` is taken from the installed module's source file (parsed with
  ``ast``, so it is the library's code as shipped, not a copy) and executed with
  ``positions`` and an object carrying ``floor_scale`` and ``attn_scale``.
* mscale: transformers==5.23.0, ``ROPE_INIT_FUNCTIONS["yarn"]`` on a Llama config with
  ``factor`` s: its ``attention_factor`` (``get_mscale(s)``), which multiplies cos and sin.
* logn: Qwen-7B's ``modeling_qwen.py`` lives on the Hugging Face hub, which this machine
  cannot reach; its expression, ``math.log(i, self.seq_length) if i > self.seq_length
  else 1`` for i in 1.. (``QWenAttention.__init__``), is evaluated here as quoted, and
  labelled so in the file.
* ssmax has no public code; its tests are properties of the paper's Eq. 3.

Regenerate (transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/temperature.py

which writes tests/golden/temperature.json.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "temperature.json"
POSITIONS = list(range(0, 70)) + [127, 128, 255, 256, 1000, 1023]


def llama4_scales(floor_scale: float, attn_scale: float) -> list[float]:
    import transformers

    # the module's source as installed (importing it needs the tokenizers package, which
    # the statement does not use): Llama4TextAttention.forward, parsed
    source = (Path(transformers.__file__).parent / "models" / "llama4" / "modeling_llama4.py").read_text()
    (cls,) = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Llama4TextAttention"]
    (forward,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
    (statement,) = [n for n in ast.walk(forward) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "attn_scales" for t in n.targets)
                    and "floor_scale" in ast.unparse(n.value)]
    namespace = {"torch": torch, "positions": torch.tensor(POSITIONS, dtype=torch.float64),
                 "self": type("Layer", (), {"floor_scale": floor_scale, "attn_scale": attn_scale})()}
    exec(compile(ast.Module(body=[statement], type_ignores=[]), "modeling_llama4.py", "exec"), namespace)
    return namespace["attn_scales"].tolist()


def yarn_attention_factor(factor: float) -> float:
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, max_position_embeddings=64,
                      rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": factor,
                                       "original_max_position_embeddings": 64})
    _, attention_factor = ROPE_INIT_FUNCTIONS["yarn"](cfg, "cpu")
    return float(attention_factor)


def qwen_logn(seq_length: int) -> list[float]:
    """The quoted expression of QWenAttention.__init__, for i = position + 1."""
    logn_list = [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, max(POSITIONS) + 2)]
    return [logn_list[p] for p in POSITIONS]


def main() -> None:
    import transformers

    assert transformers.__version__ == "5.23.0", transformers.__version__
    golden = {
        "positions": POSITIONS,
        "llama4": [{"floor_scale": f, "attn_scale": a, "scales": llama4_scales(f, a)} for f, a in ((64, 0.1), (8192, 0.1), (16, 0.5))],
        "mscale": {str(s): yarn_attention_factor(float(s)) for s in (2, 4, 8, 16)},
        "logn": {"source": "quoted from Qwen-7B modeling_qwen.py (QWenAttention.__init__), evaluated as written",
                 "cases": [{"train_len": L, "factors": qwen_logn(L)} for L in (64, 16)]},
    }
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
