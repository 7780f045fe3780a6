"""One function picks each question's board (suite.report.overview.canonical_board), and the
index, the scale page and ``posbench leaderboard`` all give its answer: a project with a
language-modelling board of three encodings at three seeds and one of two encodings at five
seeds. The old rule (the most seeds) answered from the two-row board; the canonical board is the
one that holds the most encodings, and its answer says which encoding it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.cli.main import main
from suite.report.overview import answer_lines, canonical_board, overview
from suite.report.site import render
from tests.report.test_site import BPB, Results, build_from


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("canonical")
    results = Results(root)
    for enc in ("alibi", "rope", "learned"):
        for seed in (0, 1, 2):
            results.bpb(results.run(enc, seed), dict(zip((1, 2, 4), BPB[enc][seed])))
    for enc, at in (("alibi", 1.0), ("nope", 1.5)):
        for seed in range(5):
            v = at + 0.01 * seed
            results.bpb(results.run(enc, seed, size="tiny-4l"), {1: v, 2: v + 0.1, 4: v + 0.2})
    render(results.database(), root / "site")
    return root


def test_the_canonical_board_holds_the_most_encodings_and_names_what_it_lacks(project):
    lb = build_from(project)
    board = canonical_board(lb, "lm")
    assert board.id == "lm-tiny-lm" and len(board.entries) == 3  # not lm-tiny-4l-lm, of five seeds
    (lm,) = [a for a in overview(lb.all).answers if a.question.kind == "lm"]
    assert lm.board is board and lm.lacking == ["NoPE"] and lm.best == ["ALiBi"]


def test_the_index_the_scale_page_and_the_terminal_give_the_same_answer(project, capsys):
    lb = build_from(project)
    (lm_line,) = [line for line in answer_lines(lb) if line.startswith("Best on language modelling")]
    assert "ALiBi" in lm_line and "Canonical board lm-tiny-lm " in lm_line and "lacks 1 encoding" in lm_line
    index = (project / "site" / "index.html").read_text()
    answers = index[index.index('id="answers"'):index.index("</ul>", index.index('id="answers"'))]
    lm_item = next(item for item in answers.split("<li>") if "language modelling" in item)
    assert "ALiBi" in lm_item and 'href="boards/lm-tiny-lm.html"' in lm_item and "lacks 1 encoding" in lm_item
    scale = (project / "site" / "scale.html").read_text()
    assert lm_line in scale
    assert main(["--root", str(project), "leaderboard"]) == 0
    assert lm_line in " ".join(capsys.readouterr().out.split())  # wrapped to 80 columns


def test_a_language_modelling_board_page_carries_the_extrapolation_figure(project):
    page = (project / "site" / "boards" / "lm-tiny-lm.html").read_text()
    assert "Extrapolation apart from quality: bpb at 1x and its change to 4x" in page
    assert "bpb change 1x to 4x" in page  # the column beside it
