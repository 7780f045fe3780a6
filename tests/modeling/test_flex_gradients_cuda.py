"""FlexAttention's gradients against the float-mask path, on a GPU.

On a CPU FlexAttention has no backward (tests/modeling/test_flex.py checks its forward
there), so the gradients of the fused kernel that training takes on a GPU are checked
here: the same weights on both paths, one batch, and every parameter's gradient compared.
Skipped where no CUDA device is (``make test``'s machines); run on a lent GPU by
``scripts/gpu/check.sh``, which keeps the figures it prints.

fp32 with TF32 off on both paths, so the comparison is of the attention arithmetic, not of
the matmul precision: the fused kernel sums its softmax in another order (online softmax,
Milakov and Gimelshein 2018), so the tolerance is fp32 rounding, not bit equality.
"""

from __future__ import annotations

import pytest
import torch

from suite.modeling.model import AttentionPath, ModelConfig

from tests.encodings.helpers import SPECS, build_model, spec
from tests.modeling.test_flex import FLEX_CFG

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (scripts/gpu/check.sh)")]

RELATIVE = [p.stem for p in SPECS if spec(p.stem).implementation().relative_bias is not None]
# GPT-2 small's shape (sizes/gpt2-small.yaml) at its training length, for the kernel's real block sizes
GPT2_SMALL = ModelConfig(d_model=768, n_layers=12, n_heads=12, d_ff=3072, train_len=1024)


@pytest.fixture(autouse=True)
def _fp32():
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def gradients(model, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    logits = model.train()(idx)
    torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), idx[:, 1:].flatten()).backward()
    return logits.detach(), {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def compare(name: str, cfg: ModelConfig, batch: int) -> dict:
    plain, flex = build_model(name, seed=1, cfg=cfg), build_model(name, seed=1, cfg=cfg)
    with torch.no_grad():  # nonzero learned biases (T5 starts at zero)
        for p in plain.parameters():
            p.add_(0.02 * torch.randn_like(p))
    flex.load_state_dict(plain.state_dict())
    plain, flex = plain.cuda(), flex.cuda()
    flex.use_flex_attention()
    assert set(flex.paths) == {AttentionPath.FLEX} and set(plain.paths) == {AttentionPath.FLOAT_MASK}
    idx = torch.randint(0, 256, (batch, cfg.train_len), device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    want_logits, want = gradients(plain, idx)
    got_logits, got = gradients(flex, idx)
    assert set(got) == set(want)
    worst = max(want, key=lambda n: relative_error(got[n], want[n]))
    figures = {"logits": relative_error(got_logits, want_logits), "worst_gradient": worst,
               "gradient": relative_error(got[worst], want[worst])}
    print(f"{name} d_model={cfg.d_model} T={cfg.train_len}: relative error of the logits {figures['logits']:.2e}, "
          f"of the gradients at most {figures['gradient']:.2e} ({worst})")
    return figures


@pytest.mark.parametrize("name", RELATIVE)
def test_flex_gives_the_float_mask_paths_gradients(name):
    figures = compare(name, FLEX_CFG, batch=4)
    assert figures["logits"] < 1e-5 and figures["gradient"] < 1e-4, figures


@pytest.mark.parametrize("name", ["alibi", "t5"])
def test_flex_gradients_at_gpt2_smalls_shape(name):
    figures = compare(name, GPT2_SMALL, batch=2)
    assert figures["logits"] < 1e-4 and figures["gradient"] < 1e-3, figures
