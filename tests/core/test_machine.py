"""What computed a figure (suite.core.machine): the CPU's identity, each library's code path as the
library itself reports it, and when two records are of one machine class."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from suite.core import machine, numerics


def cpuinfo_field(name: str) -> str:
    for line in open("/proc/cpuinfo").read().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return ""


def test_the_cpu_identity_is_the_kernels_report():
    here = machine.cpu_identity()
    assert here["vendor"] == cpuinfo_field("vendor_id")
    assert (here["cpu_family"], here["cpu_model_id"], here["stepping"]) == (
        cpuinfo_field("cpu family"), cpuinfo_field("model"), cpuinfo_field("stepping"))
    flags = set(cpuinfo_field("flags").split())
    assert set(here["simd"].split()) == flags & set(machine.SIMD_FLAGS)


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="a torch without oneDNN")
def test_onednn_isa_is_what_onednn_prints_in_a_process_of_its_own():
    """The reference is oneDNN's own verbose header (``ONEDNN_VERBOSE=1``) in a fresh process, cut
    at 80 characters as records hold it: the AVX10.2 name runs to 84, and the published runs
    trained on the lent H200s name their host Xeon's AMX one cut there ("... Intel AMX wi"), so
    the cut is part of the class."""
    code = "import torch; torch.nn.functional.conv1d(torch.zeros(1, 8, 16), torch.zeros(8, 1, 4), groups=8)"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ONEDNN_VERBOSE": "1"},
                         capture_output=True, text=True)
    header = [line.split(",cpu,isa:", 1)[1] for line in out.stdout.splitlines() if ",cpu,isa:" in line]
    assert header and machine.onednn_isa() == header[0].strip()[:80]


def test_two_records_are_one_class_only_when_every_class_field_is_named_and_equal():
    here = numerics.measured()
    assert machine.compare(here, here).same
    assert machine.compare(here, here).describe() == "the same machine class"
    other = machine.compare({**here, "simd": "avx2 fma"}, here)
    assert not other.same and other.differ == (f"simd: recorded avx2 fma, here {here['simd']}",)
    # a record made before the class was recorded names only its CPU model and settings
    old = {k: v for k, v in here.items() if k not in ("vendor", "cpu_family", "cpu_model_id", "stepping", "simd",
                                                      "onednn_isa")}
    match = machine.compare(old, here)
    assert not match.same and not match.differ
    assert match.describe() == ("a machine class the record does not fully name (no vendor, cpu_family, "
                                "cpu_model_id, stepping, simd, onednn_isa)")
    assert machine.label(old) == f"{here['cpu']} (generation not recorded)"
    assert machine.label(here).startswith(f"{here['cpu']} ({here['vendor']} {here['cpu_family']}/")
