"""What a row is: a positional encoding (changes only how position enters; weights within 1% of
NoPE's at GPT-2 small's shape) or an architecture change beside its base
(suite.specs.encoding's ``kind`` and ``base``, suite.submission.weights)."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.cli.main import main
from suite.core.yamldoc import SpecErrors
from suite.specs import load_encoding
from suite.submission.weights import TOLERANCE, extra_weights, weight_problem
from tests.conftest import REPO, copy_specs

SPECS = {path.stem: load_encoding(path) for path in sorted((REPO / "encodings").glob("*.yaml"))}


def test_every_shipped_positional_encoding_keeps_within_1_percent_of_nopes_weights():
    trained = {name: spec for name, spec in SPECS.items() if spec.kind == "positional" and spec.trains_as is None}
    assert "learned" in trained and "path" in trained  # a position table and a per-token probe fit the rule
    over = {name: f"{extra_weights(spec):+.2%}" for name, spec in trained.items() if weight_problem(spec)}
    assert over == {}


def test_each_architecture_change_is_beside_a_shipped_positional_encoding():
    changes = {name: spec.base for name, spec in SPECS.items() if spec.kind == "architecture"}
    assert {"canon-nope", "qwen3-next", "mla", "gated-rope", "gemma3"} <= set(changes)
    assert all(SPECS[base].kind == "positional" for base in changes.values())


@pytest.mark.parametrize("name", ["gated-rope", "mla", "qwen3-next", "grape-ap"])
def test_an_encoding_that_adds_weights_could_not_be_declared_positional(name):
    positional = SPECS[name].model_copy(update={"kind": "positional", "base": None})
    assert extra_weights(positional) > TOLERANCE
    assert "declare kind: architecture" in weight_problem(positional)


def test_an_architecture_change_without_a_base_and_a_positional_one_with_one_are_spec_errors(tmp_path):
    text = (REPO / "encodings" / "mla.yaml").read_text()
    path = tmp_path / "encodings" / "mla.yaml"
    path.parent.mkdir()
    path.write_text(text.replace("base: rope\n", ""))
    with pytest.raises(SpecErrors, match="add base"):
        load_encoding(path)
    path.write_text(text.replace("kind: architecture\n", ""))
    with pytest.raises(SpecErrors, match="only an architecture change has a base"):
        load_encoding(path)


def test_validate_import_refuses_a_gate_declared_positional(tmp_path: Path, capsys):
    root = copy_specs(tmp_path)
    spec = root / "encodings" / "gated-rope.yaml"
    spec.write_text(spec.read_text().replace("kind: architecture\n", "").replace("base: rope\n", ""))
    assert main(["--root", str(root), "validate", "--import", str(spec)]) == 1
    assert "declared positional, but its model has +8.31% weights" in capsys.readouterr().err
