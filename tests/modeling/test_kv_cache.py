"""The key/value cache: decoding one byte at a time with cached keys and values gives
the numbers of re-reading the whole window, for every encoding that says it is
cacheable; the others refuse it, and the lm-eval adapter falls back for them."""

from __future__ import annotations

import pytest
import torch
from lm_eval.api.instance import Instance

from suite.evaluation.lmeval_adapter import PosBenchLM
from suite.modeling.kv_cache import KVCache

from tests.encodings.helpers import CFG, SPECS, build_model

NAMES = [p.stem for p in SPECS]
L = CFG.train_len


def sharpened(name: str):
    model = build_model(name, seed=2).eval()
    with torch.no_grad():
        for block in model.blocks:  # peaked attention and confident logits: a wrong key or position would show
            if block.attn is not None:  # a token mixer's layer has none (the mixer hook)
                block.attn.qkv.weight.mul_(8)
        model.tok.weight.mul_(20)
    return model


@pytest.mark.parametrize("scale", [1, 4])
@pytest.mark.parametrize("name", NAMES)
def test_cached_decoding_equals_the_whole_window(name, scale):
    model = sharpened(name)
    T = scale * L
    if model.encodings[0].max_length() is not None and T > model.encodings[0].max_length():
        pytest.skip("not applicable at this length")
    model.set_scale(scale)
    idx = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(3))
    if not model.cacheable:
        with pytest.raises(ValueError, match="not cacheable"):
            model.extend(idx, KVCache())
        return
    with torch.no_grad():
        whole = model(idx)  # [2, T, V]
        cache = KVCache()
        steps = [model.extend(idx[:, : T // 3], cache)]  # a prompt, then one byte at a time
        steps += [model.extend(idx[:, t : t + 1], cache) for t in range(T // 3, T)]
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, rtol=0, atol=1e-5)
    assert cache.length == T


# contextual positions, randomized evaluation ids, rectified distances, xPos's span-centred decay, PaTH's
# transforms (a new token's changes what every earlier key looks like to later queries), GRAPE-AP's and
# GRAPE-M-ctx's and MLA's reading of the layer's input (the logits hook), Canon layers' convolutions over earlier tokens,
# Gated DeltaNet's recurrent state (Qwen3-Next: the mixer hook)
NOT_CACHEABLE = {"canon-nope", "cope", "cope-nodiv", "dual-chunk", "grape-ap", "grape-m-ctx", "mla", "path", "path-fox",
                 "qwen3-next", "randomized", "randomized-arange", "rerope", "rerope-leaky", "self-extend", "streaming-llm",
                 "string", "xpos"}


def test_the_encodings_that_say_they_are_cacheable():
    assert {n for n in NAMES if not build_model(n).cacheable} == NOT_CACHEABLE
    dynamic = build_model("rope-dynamic-ntk")
    assert dynamic.cacheable  # at scale 1 it is plain RoPE
    dynamic.set_scale(2)
    assert not dynamic.cacheable  # beyond L the score hook rewrites whole rows


def generate(model, contexts: list[str], kv_cache: bool, eval_len: int, max_gen_toks: int) -> list[str]:
    lm = PosBenchLM(model, L, eval_len=eval_len, batch_size=4, kv_cache=kv_cache)
    requests = [Instance("generate_until", {}, (c, {"until": ["\n\n\n"], "max_gen_toks": max_gen_toks}), i)
                for i, c in enumerate(contexts)]
    return lm.generate_until(requests)


@pytest.mark.parametrize("name", ["rope", "alibi", "sinusoidal", "t5", "cope", "rerope"])
def test_generate_until_is_the_same_with_the_cache(name):
    """Same strings with and without the cache, through lm-eval's request type, at 2x;
    one context generates past the eval length, so its window slides (fallback)."""
    model = sharpened(name)
    contexts = ["def f(x):\n    return", "import os\nimport sy", "x" * (2 * L - 5), "class A:\n    pass"]
    cached = generate(model, contexts, True, 2 * L, 12)
    assert cached == generate(model, contexts, False, 2 * L, 12)
    assert all(len(c.encode()) > 0 for c in cached)
