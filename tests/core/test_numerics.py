"""The numerics every process computes with (suite.core.numerics): asked for once, exported
to every process, recorded, and enforced where a kernel already ran at another level."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from suite.core import numerics
from suite.core.numerics import Numerics

REPO_ENV = {k: v for k, v in os.environ.items() if k not in numerics.STANDARD.variables()}


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**REPO_ENV, **env}, capture_output=True, text=True)


def test_the_standard_numerics_are_asked_for_unless_posbench_variables_say_otherwise():
    assert numerics.requested({}) == numerics.STANDARD == Numerics(1, "avx2", "AVX2,STRICT")
    asked = numerics.requested({"POSBENCH_THREADS": "3", "POSBENCH_CPU_CAPABILITY": "native",
                                "POSBENCH_MKL_CBWR": "native"})
    assert asked == Numerics(3, "native", "native")
    assert asked.library_environment() == {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "3",
                                           "ATEN_CPU_CAPABILITY": None, "MKL_CBWR": None}
    with pytest.raises(ValueError, match="threads must be an integer from 1 to 1024"):
        Numerics(threads=0)
    with pytest.raises(ValueError, match="cpu_capability must be one of"):
        Numerics(cpu_capability="sse9")


def test_a_shells_thread_count_does_not_reach_a_process_that_imports_the_suite():
    """OMP_NUM_THREADS=2 in the shell: the suite's process still computes on one thread at AVX2."""
    out = run_python("import suite, torch, os; print(torch.get_num_threads(), "
                     "torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'])",
                     OMP_NUM_THREADS="2", ATEN_CPU_CAPABILITY="default")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "AVX2", "AVX2,STRICT"]


def test_a_record_names_its_numerics_and_they_round_trip():
    here = numerics.measured()
    assert {"threads", "cpu_capability", "mkl_cbwr", "cpu", "torch", "blas"} <= here.keys()
    assert here["threads"] == 1 and here["cpu_capability"] == "AVX2"  # this test process is pinned (conftest)
    assert Numerics.from_record(here) == numerics.STANDARD
    assert numerics.differences(here, here) == []
    other = {**here, "threads": 2, "torch": "9.9"}
    assert numerics.differences(other, here) == ["threads: recorded 2, here 1", f"torch: recorded 9.9, here {here['torch']}"]
    if "mkl_branch" in here:  # MKL's own report; a record older than it is not told it differs
        assert numerics.differences({**here, "mkl_branch": "AUTO"}, here) == [
            f"mkl_branch: recorded AUTO, here {here['mkl_branch']}"]
        assert numerics.differences({k: v for k, v in here.items() if k != "mkl_branch"}, here) == []


def cpu_vendor() -> str:
    for line in open("/proc/cpuinfo").read().splitlines():
        if line.startswith("vendor_id"):
            return line.split(":", 1)[1].strip()
    return ""


@pytest.mark.skipif(not numerics.mkl_branches(), reason="this torch exports no MKL service calls (a build without MKL)")
def test_a_record_names_the_branch_mkl_itself_reports():
    """MKL's report of its branch, asked for through POSBENCH_MKL_CBWR, is what the record says:
    COMPATIBLE takes on every x86-64 CPU; AVX2,STRICT takes on an Intel CPU with AVX2. On another
    vendor's CPU Intel documents a fallback to AUTO, and MKL says so (an AMD EPYC of family 25,
    model 1 reports ``AUTO,STRICT`` with an AUTO branch of ``AUTO``): the record then names AUTO
    and its machine class (suite.core.machine) carries the CPU's identity."""
    code = ("import suite, torch; from suite.core import numerics; numerics.pin(); "
            "torch.ones(8, 8) @ torch.ones(8, 8); "
            "b = numerics.mkl_branches(); print(b['mkl_branch'], b['mkl_auto_branch'], "
            "numerics.measured()['mkl_branch'])")
    compatible = run_python(code, POSBENCH_MKL_CBWR="COMPATIBLE")
    assert compatible.returncode == 0, compatible.stderr
    assert compatible.stdout.split()[0] == "COMPATIBLE"
    standard = run_python(code)
    assert standard.returncode == 0, standard.stderr
    branch, auto, recorded = standard.stdout.split()
    assert recorded == branch  # the record names what MKL reports, not what was asked
    assert auto in numerics.MKL_BRANCH_NAMES.values()
    if cpu_vendor() == "GenuineIntel" and "avx2" in numerics.cpu_flags():
        assert branch == "AVX2,STRICT" and auto not in ("AUTO", "COMPATIBLE")
    else:
        assert branch in ("AVX2,STRICT", "AUTO,STRICT")


@pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= numerics.cpu_flags(),
                    reason="needs a CPU with AVX-512 (where ATen picks it by default)")
def test_pin_refuses_a_process_whose_kernels_already_ran_at_another_level():
    code = ("import torch; torch.ones(4).softmax(0); from suite.core import numerics; numerics.pin()")
    out = run_python(code, ATEN_CPU_CAPABILITY="avx512")  # suite's import comes after the first kernel
    assert out.returncode != 0
    assert "NumericsError: this process runs ATen at AVX512, not AVX2" in out.stderr
