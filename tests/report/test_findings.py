"""Published findings re-tested on boards built by the real board code from hand-made per-seed
figures: a real effect is found on the first half of the seeds and confirmed on the second, a
null is not found (at the rate Holm's correction allows), and a reversed claim is contradicted."""

from __future__ import annotations

import numpy as np

from suite.report.findings import Finding, check_findings, load_findings

from tests.report.test_ranking import board

PRESS = Finding(id="press", paper="Press et al. 2022", claim="ALiBi beats RoPE", kind="lm", better="alibi", worse="rope")


def lm_board(gain: float, seeds: int, rng, sd: float = 0.05):
    """ALiBi better than RoPE by ``gain`` bits per byte at 16x (lower is better), a shared per-seed effect."""
    shared = rng.normal(0, 0.3, seeds)
    rope = 4.0 + shared + rng.normal(0, sd, seeds)
    alibi = 4.0 - gain + shared + rng.normal(0, sd, seeds)
    flat = list(2.4 + rng.normal(0, 0.01, seeds))
    return board({"alibi": {1: flat, 16: list(alibi)}, "rope": {1: flat, 16: list(rope)}})


def test_the_shipped_findings_load_and_name_real_rows():
    findings = load_findings()
    assert {f.kind for f in findings} <= {"lm", "task"} and len({f.id for f in findings}) == len(findings)
    from tests.conftest import REPO

    names = {p.stem for p in (REPO / "encodings").glob("*.yaml")}
    assert all(f.better in names and f.worse in names for f in findings)


def test_a_real_effect_is_found_on_half_the_seeds_and_confirmed_on_the_rest():
    (check,) = check_findings([lm_board(0.3, 10, np.random.default_rng(0))], [PRESS])
    assert check.discovery == (0, 1, 2, 3, 4) and check.confirmation == (5, 6, 7, 8, 9)
    assert check.status == "confirmed" and check.gain > 0.2


def test_a_reversed_claim_is_contradicted_and_few_seeds_are_said():
    (check,) = check_findings([lm_board(-0.3, 10, np.random.default_rng(1))], [PRESS])
    assert check.status == "contradicted" and check.confirmation_p is None
    (check,) = check_findings([lm_board(0.3, 3, np.random.default_rng(2))], [PRESS])
    assert check.status == "too few seeds"


def test_with_no_effect_a_finding_is_found_on_at_most_five_percent_of_boards():
    rng = np.random.default_rng(3)
    found = sum(check_findings([lm_board(0.0, 10, rng)], [PRESS])[0].status in ("confirmed", "not confirmed")
                for _ in range(200))
    assert found <= 10
