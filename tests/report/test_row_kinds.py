"""Architecture changes are not ranked among positional encodings (suite.report.row_kinds): a
language-modelling board of the published shape, where NoPE with Canon layers leads ALiBi by
the same margin at 1x and at 4x, becomes a board of positional encodings (ALiBi first) and a
board of the architecture change beside its base (NoPE)."""

from __future__ import annotations

import pytest

from suite.report.boards import scale_boards
from suite.report.figures import Recipe
from suite.report.row_kinds import architecture_changes

RECIPE = Recipe(64, 100, 8, 1e-3)
# bits per byte at 1x and 4x, seeds 0-3 (+0.01 a seed)
MEANS = {"alibi": (2.40, 2.50), "rope": (2.40, 3.60), "nope": (2.45, 3.90), "canon-nope": (1.80, 1.90),
         "gated-rope": (2.35, 3.40)}


def figures(means=MEANS, seeds=4):
    out, runs = [], {}
    for enc, by_scale in means.items():
        for seed in range(seeds):
            run_id = f"{enc}-{seed}"
            runs[run_id] = {"size": "tiny", "task": "lm", "finished_at": "2026-11-20", "recipe": RECIPE}
            for scale, value in zip((1, 4), by_scale):
                out.append({"checkpoint_level": False, "scale": scale, "metric": "bpb", "run_id": run_id,
                            "size": "tiny", "task": "lm", "encoding": enc, "display_name": enc, "family": None,
                            "trained_as": None, "eval_len": 64 * scale, "seed": seed, "value": value + 0.01 * seed,
                            "n": None, "status": "ok", "chance": None})
    return out, runs


def test_the_shipped_architecture_changes_name_their_bases():
    changes = architecture_changes()
    assert changes["canon-nope"] == "nope" and changes["gated-rope"] == "rope" and changes["qwen3-next"] == "rope-partial"
    assert "alibi" not in changes and "rope" not in changes


def test_an_architecture_change_is_on_its_own_board_beside_its_base_not_ranked_among_positional_encodings():
    positional, beside = scale_boards(*figures())
    assert positional.id == "lm-tiny-lm" and not positional.architecture
    assert {e.encoding for e in positional.entries} == {"alibi", "rope", "nope"}
    assert positional.entries[0].encoding == "alibi" and positional.headline.startswith("At 4x: alibi")
    assert beside.id == "lm-tiny-lm-architecture" and beside.architecture
    assert beside.title.endswith(": architecture changes beside their base encodings")
    assert {e.encoding for e in beside.entries} == {"canon-nope", "gated-rope", "nope", "rope"}
    assert beside.notes[0].startswith("Architecture changes")


def test_a_board_without_architecture_changes_is_built_as_before():
    (only,) = scale_boards(*figures({k: v for k, v in MEANS.items() if k in ("alibi", "rope", "nope")}))
    assert only.id == "lm-tiny-lm" and not only.architecture and len(only.entries) == 3


def test_a_language_modelling_board_shows_the_change_from_1x_and_how_much_of_the_lead_is_there_at_1x():
    """The Canon board's shape: canon-nope leads its base by 0.55 at 1x and by 2.00 at 4x on its
    own board; on the positional board ALiBi's lead over RoPE is all extrapolation (tied at 1x)."""
    positional, beside = scale_boards(*figures())
    alibi = positional.entries[0]
    assert positional.column("change").label == "bpb change 1x to 4x"
    assert alibi.cells["change"].value == pytest.approx(0.10) and alibi.cells["change"].interval.lo is not None
    assert positional.headline.endswith("Its lead over rope is 1.100 bpb at 4x; at 1x the two are level: the "
                                        "lead is all extrapolation.")
    assert beside.entries[0].encoding == "canon-nope"
    assert beside.headline.endswith("Its lead over gated-rope: 1.500 bpb at 4x, 0.550 at 1x (37% of it already "
                                    "there within the training length).")


def test_a_lead_that_is_behind_at_1x_is_all_extrapolation():
    """The published tiny board's shape: ALiBi ahead of PoPE by 0.643 at 16x and behind it by 0.197
    at 1x."""
    (lm,) = scale_boards(*figures({"alibi": (2.40, 2.50), "pope": (2.20, 3.00)}))
    assert lm.headline.endswith("Its lead over pope is 0.500 bpb at 4x; at 1x it trails by 0.200: the lead is all "
                                "extrapolation.")


def test_a_language_modelling_board_draws_its_extrapolation_apart_from_its_quality():
    """One point per row at (bpb 1x, change to 4x): canon-nope far left (better at 1x) and as low
    as ALiBi (as little lost), which the 4x column alone cannot tell apart."""
    from suite.report.extrapolation_figure import extrapolation_figure

    positional, beside = scale_boards(*figures())
    svg = extrapolation_figure(beside)
    assert svg.startswith("<svg") and svg.count('<g class="series"') == len(beside.entries)
    assert 'data-key="canon-nope"' in svg and "bpb 4x minus 1x" in svg
