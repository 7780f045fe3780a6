"""SLURM profiles are checked like specs before anything is written: a value that sbatch would
not take, or that would end an #SBATCH line and start a shell line, is one error naming the
file, line and field, every one of them in one run."""

from __future__ import annotations

import pytest

from suite.cli.main import main
from suite.core.yamldoc import SpecErrors
from suite.execution.executors.slurm import load_profiles

HOSTILE = """\
profiles:
  evil:
    partition: "debug\\nrm -rf $HOME"
    account: "a b"
    time: "4 hours"
    nodes: 0
    colour: red
    sbatch_extra:
      - "--mem=32G"
      - "--comment=x\\necho pwned"
      - "echo pwned"
  fine:
    partition: gpu,debug
    time: "1-12:00:00"
    sbatch_extra: ["--mem=128G", "--constraint=a100|h100"]
"""


def test_every_bad_value_of_every_profile_is_named_with_its_line(tmp_path):
    path = tmp_path / "slurm-profiles.yaml"
    path.write_text(HOSTILE)
    with pytest.raises(SpecErrors) as caught:
        load_profiles(path)
    found = sorted((e.line, e.field) for e in caught.value.errors)
    assert found == [(3, "profiles.evil.partition"), (4, "profiles.evil.account"), (5, "profiles.evil.time"),
                     (6, "profiles.evil.nodes"), (7, "profiles.evil.colour"), (10, "profiles.evil.sbatch_extra.1"),
                     (11, "profiles.evil.sbatch_extra.2")]


@pytest.mark.parametrize("time", ["\u0661\u0662:\u0660\u0660:\u0660\u0660", "\uff11:00"])  # Arabic-Indic, fullwidth
def test_a_time_of_digits_sbatch_does_not_read_is_named(tmp_path, time):
    """sbatch reads ASCII digits; a pattern's \\d takes any script's (a profile passed them before)."""
    path = tmp_path / "slurm-profiles.yaml"
    path.write_text(f"profiles:\n  p:\n    time: \"{time}\"\n")
    with pytest.raises(SpecErrors) as caught:
        load_profiles(path)
    assert [(e.line, e.field) for e in caught.value.errors] == [(3, "profiles.p.time")]


def test_the_shipped_profiles_and_good_values_pass(tmp_path):
    from tests.conftest import REPO

    assert set(load_profiles(REPO / "slurm-profiles.yaml")) == {"gpu-4x", "cpu"}
    path = tmp_path / "p.yaml"
    path.write_text(HOSTILE.split("  fine:\n")[0].split("  evil:")[0] + "  fine:\n" + HOSTILE.split("  fine:\n")[1])
    assert load_profiles(path)["fine"].sbatch_extra == ("--mem=128G", "--constraint=a100|h100")


def test_run_refuses_a_hostile_profile_and_writes_no_script(tiny_grid, project_root, capsys):
    grid = tiny_grid("slurm-evil")
    (project_root / "slurm-profiles.yaml").write_text(HOSTILE)
    assert main(["--root", str(project_root), "run", str(grid), "--executor", "slurm", "--profile", "fine",
                 "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "slurm-profiles.yaml:3: profiles.evil.partition:" in err and "sbatch_extra.2" in err
    assert not (project_root / "results" / "slurm").exists()
    (project_root / "slurm-profiles.yaml").write_text("profiles:\n  fine:\n    partition: gpu\n")
    assert main(["--root", str(project_root), "run", str(grid), "--executor", "slurm", "--profile", "fine",
                 "--partition", "gpu\nrm -rf /", "--dry-run"]) == 1
    assert "--partition: String should match pattern" in capsys.readouterr().out


def test_the_script_exports_the_numerics_and_gives_a_gpu_task_its_cpus(tmp_path):
    from suite.execution.executors.slurm import Profile, sbatch_script

    cpu = sbatch_script(Profile(cpus_per_task=8), 2, tmp_path, tmp_path / "m.json", tmp_path, "g")
    assert "export POSBENCH_THREADS=1" in cpu and "export POSBENCH_CPU_CAPABILITY=avx2" in cpu
    assert "SLURM_CPUS_PER_TASK:-1" not in cpu  # a CPU task's figures depend on its threads: one
    gpu = sbatch_script(Profile(gpus_per_node=4, cpus_per_task=8), 2, tmp_path, tmp_path / "m.json", tmp_path, "g")
    assert gpu.index("export POSBENCH_THREADS=1") < gpu.index('export POSBENCH_THREADS="${SLURM_CPUS_PER_TASK:-1}"')
