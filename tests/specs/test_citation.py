"""An encoding's ``paper:`` must be a citation (suite.specs.citation): every shipped spec's is,
the scaffold's placeholder and the other stand-ins are refused by ``posbench validate``."""

from __future__ import annotations

import pytest
import yaml

from suite.cli.main import main
from suite.specs.citation import citation_problem

from tests.conftest import REPO

SHIPPED = sorted((REPO / "encodings").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_paper_is_a_citation(path):
    assert citation_problem(yaml.safe_load(path.read_text())["paper"]) is None


@pytest.mark.parametrize("paper", [
    "Su et al. 2021, RoFormer: Enhanced Transformer with Rotary Position Embedding (Eq. 34)",
    "Chiang and Cholak 2022, Overcoming a Theoretical Limitation of Self-Attention",
    "Gemma Team 2025, Gemma 3 Technical Report",
    "bloc97 2023, NTK-Aware Scaled RoPE (reddit r/LocalLLaMA)",
    "Meta 2025, Llama 4",
])
def test_authors_year_and_title_make_a_citation(paper):
    assert citation_problem(paper) is None


@pytest.mark.parametrize("paper, why", [
    ("TODO: authors year, title (and the equation this implements)", "'TODO' is a placeholder"),
    ("Su et al. 2021, TBD", "'TBD' is a placeholder"),
    ("tbd", "'tbd' is a placeholder"),
    ("Su et al. 2021, ...", "'...' is a placeholder"),
    ("", "empty"),
    ("   ", "empty"),
    (None, "empty"),
    ("paper", "'paper' is not a citation"),
    ("RoFormer", "'RoFormer' is not a citation"),  # no authors, no year
    ("Su et al., RoFormer", "is not a citation"),  # no year
    ("Su et al. 2021", "is not a citation"),  # no title
    ("Su et al. 2021, paper", "'paper' is not a title"),
    ("Su et al. 2021, X", "'X' is not a title"),
])
def test_placeholders_and_partial_citations_are_refused(paper, why):
    problem = citation_problem(paper)
    assert problem is not None and why in problem and "'<authors> <year>, <title>'" in problem


def test_validate_refuses_the_scaffolds_placeholder_naming_file_line_and_field(project_root, capsys):
    assert main(["--root", str(project_root), "new-encoding", "my-rope", "--family", "rotary"]) == 0
    assert "next: cite the paper in encodings/my-rope.yaml" in capsys.readouterr().out  # what comes first
    spec = project_root / "encodings" / "my-rope.yaml"
    assert main(["--root", str(project_root), "validate", str(spec)]) == 1
    (line,) = [e for e in capsys.readouterr().err.splitlines() if e.startswith(str(spec))]
    assert line.startswith(f"{spec}:4: paper: 'TODO' is a placeholder, not a citation: cite the paper as")
    spec.write_text(spec.read_text().replace('"TODO: authors year, title (and the equation this implements)"',
                                             '"Doe et al. 2026, My Rotary Encoding (Eq. 1)"'))
    assert main(["--root", str(project_root), "validate", str(spec)]) == 0


def test_validate_of_a_grid_refuses_the_placeholder_of_an_encoding_it_names(project_root, capsys):
    spec = project_root / "encodings" / "my-alibi.yaml"
    spec.write_text((project_root / "encodings" / "alibi.yaml").read_text().replace("name: alibi", "name: my-alibi", 1))
    text = spec.read_text()
    spec.write_text(text[:text.index("paper:")] + 'paper: "TBD"\n' + text[text.index("\n", text.index("paper:")) + 1:])
    grid = project_root / "grids" / "mine.yaml"
    grid.write_text("name: mine\nencodings: [rope, my-alibi]\nsizes: [tiny]\ntasks: [lm]\n")
    assert main(["--root", str(project_root), "validate", str(grid)]) == 1
    err = capsys.readouterr().err
    assert f"{spec}:" in err and "paper: 'TBD' is a placeholder, not a citation" in err
