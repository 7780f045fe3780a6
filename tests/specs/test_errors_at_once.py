"""``posbench validate`` reports every error of a file in one run, not in rounds: a grid whose
document does not validate as a whole still has its name and its referenced specs checked."""

from __future__ import annotations

from suite.cli.main import main


def test_four_mistakes_in_a_copy_of_the_default_job_are_all_reported_at_once(project_root, capsys):
    text = (project_root / "grids" / "quick.yaml").read_text()
    assert "encodings: [nope, rope," in text and "  lr: 0.003\n  warmup_steps: 50" in text
    text = (text.replace("encodings: [nope, rope,", "encodings: [nope, rpoe,")  # a typo
                .replace("  lr: 0.003\n  warmup_steps: 50", "  lr: -0.003\n  warmup_steps: 50")  # out of range
                .replace("sizes: [tiny]", "sizes: [tiny]\ncolour: blue"))  # a stray key
    path = project_root / "grids" / "my-quick.yaml"  # the name inside is still 'quick'
    path.write_text(text)
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(path))]
    fields = [line.split(": ")[1] for line in err]
    assert fields == ["name", "encodings.1", "colour", "train.lr"]
    assert "did you mean 'rope'" in err[1] and "must match the file name 'my-quick'" in err[0]
