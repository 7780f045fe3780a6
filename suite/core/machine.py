"""What computed a figure, precisely enough that "the same machine class" means the same arithmetic.

A CPU's model name does not say that: ``AMD EPYC`` is the name of Zen 2, Zen 3 and Zen 4 parts,
with and without AVX-512, and MKL's pinned branch (``MKL_CBWR=AVX2,STRICT``) is honoured on Intel
CPUs only: on another vendor's MKL takes its AUTO branch, which it picks by the CPU
(:func:`suite.core.numerics.mkl_branches`). Measured: an ALiBi flip-flop run recorded on an
AVX-512 ``AMD EPYC`` re-ran on an AVX2-only ``AMD EPYC`` (family 25, model 1) with its 16x
accuracy moved from 0.725 to 0.655, under the same pinned settings.

So a record names, besides the settings (suite.core.numerics), the identity below:

* the CPU: vendor, family, model and stepping as the kernel reports them (``/proc/cpuinfo``);
* the SIMD flags the pinned numerics can reach (:data:`SIMD_FLAGS`): a library that dispatches
  by CPU picks among these;
* the code path each library that dispatches by CPU reports in effect: MKL's branch, oneDNN's
  ISA (``ONEDNN_VERBOSE``'s ``isa:`` line: oneDNN runs the convolutions, e.g. Canon layers);
  ``unpinned`` where the library cannot be asked;
* torch and its BLAS.

Two records are the same machine class only when every one of :data:`CLASS_FIELDS` is recorded
in both and equal. A record made before these fields existed names only its CPU model (and,
since 2026-11-27, MKL's branch): its class is *unrecorded*, and bit-identity is not claimed for
it on any machine; a re-run is compared within the measured cross-class tolerances
(suite/results/tolerances.yaml).
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# what a library that dispatches by CPU chooses among, on x86-64 (ATen, MKL, oneDNN, Sleef)
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
              "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")
CPUINFO_FIELDS = {"vendor_id": "vendor", "cpu family": "cpu_family", "model": "cpu_model_id", "stepping": "stepping"}
# the fields that make a machine class (besides the settings of suite.core.numerics.SETTINGS)
CLASS_FIELDS = ("vendor", "cpu_family", "cpu_model_id", "stepping", "simd", "mkl_branch", "onednn_isa", "torch",
                "blas", "machine")
UNPINNED = "unpinned"  # a library whose code path this process cannot ask for


def _cpuinfo() -> dict[str, str]:
    """The first processor's lines of ``/proc/cpuinfo`` (empty where there is none)."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor only: every core of a machine is the same part
        key, _, value = line.partition(":")
        out.setdefault(key.strip(), value.strip())
    return out


def cpu_identity() -> dict[str, str]:
    """Vendor, family, model, stepping and the reachable SIMD flags of this CPU."""
    info = _cpuinfo()
    # a field the kernel leaves out (some hypervisors hide the stepping) stays empty, as reported;
    # without /proc/cpuinfo at all (not Linux) the vendor is the platform's processor name
    out = {name: info.get(key, "") for key, name in CPUINFO_FIELDS.items()}
    if not info:
        out["vendor"] = platform.processor()
    flags = set(info.get("flags", "").split())
    out["simd"] = " ".join(flag for flag in SIMD_FLAGS if flag in flags)
    return out


@functools.lru_cache(maxsize=1)
def onednn_isa() -> str:
    """The ISA oneDNN reports it dispatches to in this process (``isa:Intel AVX2`` of its verbose
    header, printed by the first primitive run with verbose on), or :data:`UNPINNED` where it
    cannot be read (no oneDNN; the header already printed by an earlier verbose run)."""
    import torch

    if not torch.backends.mkldnn.is_available():
        return UNPINNED
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 1)  # oneDNN prints from C to file descriptor 1
        try:
            with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
                torch.nn.functional.conv1d(torch.zeros(1, 8, 16), torch.zeros(8, 1, 4), groups=8)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        capture.seek(0)
        text = capture.read(64_000).decode(errors="replace")
    for line in text.splitlines():
        _, found, isa = line.partition(",cpu,isa:")
        if found:
            return isa.strip()[:80]
    return UNPINNED


def class_of(numerics: dict | None) -> dict[str, str | None]:
    """The machine-class fields a record's ``numerics`` names (None: not recorded)."""
    numerics = numerics or {}
    return {key: (None if numerics.get(key) is None else str(numerics[key])[:120]) for key in CLASS_FIELDS}


@dataclass(frozen=True)
class ClassMatch:
    """How a record's machine class compares with another's (this machine's, usually)."""

    differ: tuple[str, ...]  # ``field: recorded X, here Y``
    unrecorded: tuple[str, ...]  # class fields the record does not name

    @property
    def same(self) -> bool:
        """Bit-identity is claimed only here: every class field recorded, and equal."""
        return not self.differ and not self.unrecorded

    def describe(self) -> str:
        if self.same:
            return "the same machine class"
        if self.differ:
            return "another machine class (" + "; ".join(self.differ) + ")"
        return "a machine class the record does not fully name (no " + ", ".join(self.unrecorded) + ")"


def compare(recorded: dict | None, here: dict) -> ClassMatch:
    mine, theirs = class_of(recorded), class_of(here)
    differ = tuple(f"{key}: recorded {mine[key]}, here {theirs[key]}" for key in CLASS_FIELDS
                   if mine[key] is not None and mine[key].lower() != str(theirs[key]).lower())
    return ClassMatch(differ, tuple(key for key in CLASS_FIELDS if mine[key] is None))


def class_key(numerics: dict | None) -> tuple | str | None:
    """What two records share exactly when they name one machine class: every one of
    :data:`CLASS_FIELDS` where a record names them all; where it does not, its :func:`label` (the
    CPU model, "generation not recorded"), which is all such records can be told apart by. None
    for a record that names no numerics at all (a run that failed before it trained)."""
    if not numerics:
        return None
    fields = class_of(numerics)
    if any(value is None for value in fields.values()):
        return label(numerics)
    return tuple((key, value.lower()) for key, value in fields.items())


def label(numerics: dict | None) -> str:
    """A reader's name for the machine class a record names: the CPU model with what tells its
    arithmetic apart (``AMD EPYC (AuthenticAMD 25/1/1, AVX2, no AVX-512, MKL AUTO,STRICT)``)."""
    numerics = numerics or {}
    cls = class_of(numerics)
    name = str(numerics.get("cpu") or "an unnamed CPU")
    if cls["cpu_family"] is None:
        return f"{name} (generation not recorded)"
    simd = (cls["simd"] or "").split()
    wide = "AVX-512" if "avx512f" in simd else "no AVX-512"
    parts = [f"{cls['vendor']} {cls['cpu_family']}/{cls['cpu_model_id']}/{cls['stepping']}",
             "AVX2" if "avx2" in simd else "no AVX2", wide, f"MKL {cls['mkl_branch'] or UNPINNED}"]
    return f"{name} ({', '.join(parts)})"


__all__ = ["CLASS_FIELDS", "ClassMatch", "SIMD_FLAGS", "UNPINNED", "class_key", "class_of", "compare", "cpu_identity",
           "label", "onednn_isa"]
