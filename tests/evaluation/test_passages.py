"""The passages design of language-modelling evaluation (suite.evaluation.evaluators.extrapolation):
evenly spaced passages of the test split, each passage's bits a per-sample row whose mean is the
figure, the same bytes at every scale, and the first-bytes design's evaluation ids unchanged."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings.simple import Sinusoidal, SinusoidalParams
from suite.evaluation.evaluators.extrapolation import (
    ExtrapolationSettings,
    evaluate_lm_at,
    evaluate_passages_at,
    evaluation_passages,
)
from tests.evaluation.test_lmeval import untrained

SPLIT = torch.randint(0, 256, (5000,), generator=torch.Generator().manual_seed(3), dtype=torch.uint8)


def test_passages_are_evenly_spaced_from_the_start_to_the_end_of_the_split():
    spans = evaluation_passages(SPLIT, budget=4 * 128, passages=4, longest=64)
    assert spans.shape == (4, 129)  # each passage: its inputs and one more target
    starts = [int(torch.nonzero((SPLIT.unfold(0, 129, 1) == span).all(dim=1))[0]) for span in spans]
    assert starts[0] == 0 and starts[-1] == len(SPLIT) - 129
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert max(gaps) - min(gaps) <= 1


@pytest.mark.parametrize("budget,passages,longest,message", [
    (4 * 100, 4, 64, "does not hold whole windows of 64"),
    (40 * 128, 40, 128, "shorter than 40 passages of 128"),
])
def test_a_design_the_split_cannot_hold_is_refused(budget, passages, longest, message):
    with pytest.raises(ValueError, match=message):
        evaluation_passages(SPLIT, budget, passages, longest)


def test_each_passage_is_a_sample_and_their_mean_is_the_figure_at_every_scale():
    model = untrained(Sinusoidal, SinusoidalParams(), train_len=16)
    for scale in (1, 2, 4):
        [row], curves, samples = evaluate_passages_at(model, SPLIT, 16, scale, tokens=8 * 64, passages=8,
                                                      batch_size=4, curve_buckets=4)
        assert [s.doc_id for s in samples] == list(range(8)) and {s.metric for s in samples} == {"bpb"}
        assert row.value == pytest.approx(sum(s.correct for s in samples) / 8, rel=1e-6)
        values = torch.tensor([s.correct for s in samples])
        assert row.stderr == pytest.approx(float(values.std() / math.sqrt(8)), rel=1e-5)
        assert row.n == 8 * 64 and row.eval_len == 16 * scale and len(curves) == 4
    # the same passages at every scale: their hashes name the bytes read
    hashes = {scale: [s.prompt_hash for s in evaluate_passages_at(model, SPLIT, 16, scale, 512, 8, 4, 4)[2]]
              for scale in (1, 4)}
    assert hashes[1] == hashes[4] and len(set(hashes[1])) == 8


def test_one_passage_at_the_start_is_the_first_bytes_design():
    model = untrained(Sinusoidal, SinusoidalParams(), train_len=16)
    [first], _ = evaluate_lm_at(model, SPLIT, 16, 2, tokens=256, batch_size=4, curve_buckets=4)
    [passage], _, _ = evaluate_passages_at(model, SPLIT, 16, 2, tokens=256, passages=1, batch_size=4, curve_buckets=4)
    assert passage.value == pytest.approx(first.value, rel=1e-6)


def test_settings_without_passages_keep_the_evaluation_ids_they_had():
    """Settings are part of every evaluation id: the first-bytes design dumps no passages key."""
    assert ExtrapolationSettings().model_dump() == {"tokens": 32768, "batch_size": 8, "curve_buckets": 32}
    assert ExtrapolationSettings(passages=16).model_dump()["passages"] == 16
