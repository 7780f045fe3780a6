"""The numerics of every process that trains or evaluates: one place decides them.

A tiny model trained past zero loss decides its behaviour beyond the training length by
floating-point rounding, so a figure reproduces only where the arithmetic is the same
operation for operation. Three settings change that arithmetic on a CPU, all measured:

* **Threads** (``torch.set_num_threads``; OMP/MKL threads for the processes we start): a
  reduction split over more threads sums in another order. ``posbench verify`` on all
  cores matched 5 of 21 figures of a flip-flop run the grid trained on one thread, and 21
  of 21 on one thread.
* **ATen's SIMD level** (``ATEN_CPU_CAPABILITY``): PyTorch picks its vectorised kernels
  (softmax, fused attention, ...) for the widest instruction set the CPU has; an AVX-512
  machine and an AVX2 one round differently. Pinned to ``avx2``, which every x86-64 machine
  of the last decade has, so the figure is the same on all of them.
* **MKL's code path** (``MKL_CBWR``, Intel's "conditional numerical reproducibility"): MKL
  dispatches matrix products by CPU too. ``AVX2,STRICT`` fixes the branch, and STRICT keeps
  it bitwise across thread counts for the BLAS-3 routines. Intel's oneMKL developer guide
  ("Getting Started with Conditional Numerical Reproducibility") promises that branch's
  results on every *Intel* CPU with AVX2 only: on other vendors' CPUs MKL ignores the setting
  and takes its AUTO branch, and only ``COMPATIBLE`` is the same on Intel and AMD. So every
  record also stores the branch MKL itself reports in effect (:func:`mkl_branches`).

The settings are asked for through ``POSBENCH_THREADS``, ``POSBENCH_CPU_CAPABILITY``
(``native``: whatever the CPU has) and ``POSBENCH_MKL_CBWR`` (``native``: MKL's own choice),
never through the libraries' own variables, which :func:`export` overwrites: a shell's
``OMP_NUM_THREADS`` must not change a published figure. ``suite/__init__.py`` exports them
before torch runs a kernel (ATen reads its variable at the first dispatch, MKL at its first
call); :func:`pin` then sets the threads and checks that the process has what was asked.
Each record stores :func:`measured` (with the CPU model), and ``posbench verify`` re-runs
a record with the settings it names (suite.submission.verify).

On a GPU these settings do not apply: Lightning's ``deterministic`` flag (recorded as
``deterministic``) decides whether cuDNN/cuBLAS pick deterministic algorithms.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

NATIVE = "native"
THREADS_ENV, CAPABILITY_ENV, MKL_ENV = "POSBENCH_THREADS", "POSBENCH_CPU_CAPABILITY", "POSBENCH_MKL_CBWR"
CAPABILITIES = ("default", "avx2", "avx512", NATIVE)  # what ATEN_CPU_CAPABILITY takes on x86-64 (default: scalar)
MAX_THREADS = 1024  # a record from anyone names them: a bound before they become OMP_NUM_THREADS
MKL_BRANCH = re.compile(r"[A-Za-z0-9_]{1,20}(,STRICT)?")  # MKL_CBWR's form: a branch, optionally strict


class NumericsError(RuntimeError):
    """The process cannot have the numerics asked for (a kernel ran before they were set)."""


@dataclass(frozen=True)
class Numerics:
    """What decides the arithmetic of a CPU figure (see the module docstring)."""

    threads: int = 1  # parallelism comes from worker processes (--jobs, array tasks), each on one thread
    cpu_capability: str = "avx2"
    mkl_cbwr: str = "AVX2,STRICT"

    def __post_init__(self):
        if not isinstance(self.threads, int) or not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads must be an integer from 1 to {MAX_THREADS}, not {self.threads!r}")
        if self.cpu_capability not in CAPABILITIES:
            raise ValueError(f"cpu_capability must be one of {', '.join(CAPABILITIES)}, not {self.cpu_capability!r}")

    @classmethod
    def from_record(cls, recorded: dict) -> "Numerics":
        """The settings a record's ``numerics`` (:func:`measured`) names."""
        capability = str(recorded.get("cpu_capability") or NATIVE).lower()
        threads = recorded.get("threads")
        return cls(threads=threads if isinstance(threads, int) and 1 <= threads <= MAX_THREADS else 1,
                   cpu_capability=capability if capability in CAPABILITIES else NATIVE,
                   mkl_cbwr=branch if MKL_BRANCH.fullmatch(branch := str(recorded.get("mkl_cbwr") or NATIVE)) else NATIVE)

    def variables(self) -> dict[str, str]:
        """The ``POSBENCH_*`` variables that ask for these settings (for a child process)."""
        return {THREADS_ENV: str(self.threads), CAPABILITY_ENV: self.cpu_capability, MKL_ENV: self.mkl_cbwr}

    def library_environment(self) -> dict[str, str | None]:
        """The libraries' own variables (None: unset, the library decides)."""
        threads = str(self.threads)
        return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
                "ATEN_CPU_CAPABILITY": None if self.cpu_capability == NATIVE else self.cpu_capability,
                "MKL_CBWR": None if self.mkl_cbwr == NATIVE else self.mkl_cbwr}


STANDARD = Numerics()


def requested(environ=None) -> Numerics:
    """The numerics this process is asked for: the ``POSBENCH_*`` variables, else :data:`STANDARD`."""
    env = os.environ if environ is None else environ
    threads = env.get(THREADS_ENV)
    if threads and not threads.isdigit():
        raise ValueError(f"{THREADS_ENV}={threads!r}: a number of threads, such as 1")
    return Numerics(threads=int(threads) if threads else STANDARD.threads,
                    cpu_capability=(env.get(CAPABILITY_ENV) or STANDARD.cpu_capability).lower(),  # torch spells AVX2
                    mkl_cbwr=env.get(MKL_ENV) or STANDARD.mkl_cbwr)


def export(numerics: Numerics | None = None) -> Numerics:
    """Write ``numerics`` (default: :func:`requested`) into this process's environment, which
    the libraries read at their first kernel and every process it starts inherits."""
    numerics = requested() if numerics is None else numerics
    os.environ.update(numerics.variables())
    for name, value in numerics.library_environment().items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return numerics


def pin(numerics: Numerics | None = None) -> Numerics:
    """Export ``numerics`` and give torch its thread count; :class:`NumericsError` when ATen
    already dispatched at another SIMD level (the variable is read once per process)."""
    import torch

    numerics = export(numerics)
    torch.set_num_threads(numerics.threads)
    have = torch.backends.cpu.get_cpu_capability().lower()
    if numerics.cpu_capability not in (NATIVE, have) and _available(numerics.cpu_capability):
        raise NumericsError(f"this process runs ATen at {have.upper()}, not {numerics.cpu_capability.upper()}: a "
                            f"kernel ran before {CAPABILITY_ENV} was exported (import suite before running torch)")
    return numerics


def _available(capability: str) -> bool:
    """Whether this CPU has ``capability`` (else ATen falls back to a lower level: a difference
    :func:`differences` reports, not an error)."""
    flags = cpu_flags()
    return {"avx2": "avx2" in flags, "avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags}.get(
        capability, True)


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what Python's platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# oneMKL's mkl_types.h (2024.2, the MKL torch 2.13.0 links): the branch codes mkl_cbwr_get returns
MKL_BRANCH_NAMES = {2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX",
                    10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}
MKL_CBWR_ALL, MKL_CBWR_STRICT = -1, 0x10000


def mkl_branches() -> dict[str, str]:
    """What MKL itself says of its code path in this process: ``mkl_branch``, the branch in
    effect (``AVX2,STRICT`` where the setting took; on a non-Intel CPU Intel documents that an
    ``AVX2`` request falls back to AUTO), and ``mkl_auto_branch``, the branch AUTO picks on this
    CPU. Empty where torch's library does not export MKL's service calls (a build without MKL,
    another platform): the record then says nothing rather than a guess.

    torch links MKL statically and exports only its service layer (``mkl_serv_cbwr_get``,
    ``mkl_serv_cbwr_get_auto_branch``, the functions behind the documented ``mkl_cbwr_get``),
    hence the lookup in ``libtorch_cpu``."""
    import ctypes

    import torch

    try:
        lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        get, auto = lib.mkl_serv_cbwr_get, lib.mkl_serv_cbwr_get_auto_branch
    except (OSError, AttributeError):
        return {}
    get.argtypes, get.restype, auto.argtypes, auto.restype = [ctypes.c_int], ctypes.c_int, [], ctypes.c_int

    def name(code: int) -> str:
        branch = MKL_BRANCH_NAMES.get(code & ~MKL_CBWR_STRICT, f"code {code & ~MKL_CBWR_STRICT}")
        return branch + (",STRICT" if code & MKL_CBWR_STRICT else "")

    return {"mkl_branch": name(get(MKL_CBWR_ALL)), "mkl_auto_branch": name(auto())}


def measured() -> dict:
    """This process's numerics as a record stores them: the settings in effect (threads and
    SIMD level as torch reports them, MKL's branch as MKL reports it), the CPU model, and the
    machine class (suite.core.machine: the CPU's identity and each library's code path)."""
    import torch

    from suite.core import machine

    return {"threads": torch.get_num_threads(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "mkl_cbwr": os.environ.get("MKL_CBWR") or NATIVE, **mkl_branches(), "cpu": cpu_model(),
            **machine.cpu_identity(), "onednn_isa": machine.onednn_isa(),
            "machine": platform.machine(), "torch": torch.__version__,
            "blas": "mkl" if torch.backends.mkl.is_available() else "other",
            "deterministic": torch.are_deterministic_algorithms_enabled() or not torch.cuda.is_available()}


def describe(numerics: Numerics) -> str:
    return (f"{numerics.threads} thread(s), ATen at {numerics.cpu_capability}, "
            f"MKL_CBWR {numerics.mkl_cbwr}")


# the fields that change a CPU figure: the settings, asked for; the machine class
# (suite.core.machine.CLASS_FIELDS) and the CPU's name, told: under the same settings another
# class computes other last bits
SETTINGS = ("threads", "cpu_capability", "mkl_cbwr")


def differences(recorded: dict, here: dict) -> list[str]:
    """``field: recorded X, here Y`` for each setting, class field or CPU name that differs (a class
    field the record does not name is not a difference: :func:`suite.core.machine.compare` says
    it is unrecorded)."""
    from suite.core import machine

    out = [f"{key}: recorded {recorded.get(key)}, here {here.get(key)}" for key in SETTINGS
           if str(recorded.get(key)).lower() != str(here.get(key)).lower()]
    out += list(machine.compare(recorded, here).differ)
    if recorded.get("cpu") is not None and str(recorded["cpu"]) != str(here.get("cpu")):
        out.append(f"cpu: recorded {recorded['cpu']}, here {here.get('cpu')}")
    return out


__all__ = ["NATIVE", "STANDARD", "Numerics", "NumericsError", "cpu_model", "describe", "differences", "export",
           "measured", "mkl_branches", "pin", "requested"]
