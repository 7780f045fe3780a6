"""Words of a generated shell script, and the sbatch options a profile may add.

Every word that is not a literal of the script's own is quoted with :func:`shlex.quote` where
it is written (a project path, a manifest path, a grid name), and an ``#SBATCH`` line holds
no character that could end it. A profile file comes from anyone, so its extra sbatch options
are an allow-list (:data:`SBATCH_EXTRA`) of options that shape resources and scheduling only:
nothing that chooses where a file is written (``--output``, ``--error``, ``--chdir``), what the
job's environment is (``--export``, ``--get-user-env``), which user or group it runs as, or
what runs around it (``--prolog``, ``--epilog``, ``--wrap``).
"""

from __future__ import annotations

import re
import shlex

# option -> the form of its value (None: a flag that takes none)
_COUNT = r"[0-9]{1,9}"
_SIZE = r"[0-9]{1,9}[KMGT]?"
_WORDS = r"[A-Za-z0-9_.+:=-]{1,200}(,[A-Za-z0-9_.+:=-]{1,200}){0,50}"
_CONSTRAINT = r"[A-Za-z0-9_.&|*\[\]()!-]{1,400}"
_MAIL = r"[A-Za-z0-9_.+-]{1,64}@[A-Za-z0-9.-]{1,190}"
SBATCH_EXTRA: dict[str, str | None] = {
    "mem": _SIZE, "mem-per-cpu": _SIZE, "mem-per-gpu": _SIZE, "tmp": _SIZE,
    "constraint": _CONSTRAINT, "cluster-constraint": _CONSTRAINT,
    "qos": _WORDS, "reservation": _WORDS, "gres": _WORDS, "gpus": _WORDS, "gpus-per-task": _WORDS,
    "gres-flags": _WORDS, "licenses": _WORDS, "exclude": _WORDS, "nodelist": _WORDS, "clusters": _WORDS,
    "ntasks-per-gpu": _COUNT, "cpus-per-gpu": _COUNT, "mincpus": _COUNT, "nice": r"-?[0-9]{1,6}",
    "priority": _COUNT, "exclusive": None, "oversubscribe": None, "contiguous": None, "hint": _WORDS,
    "mail-type": _WORDS, "mail-user": _MAIL, "comment": r"[A-Za-z0-9_.,:+ -]{1,200}", "wckey": _WORDS,
    "begin": r"[A-Za-z0-9:+-]{1,40}", "deadline": r"[A-Za-z0-9:+-]{1,40}", "time-min": r"[0-9:-]{1,20}",
    "switches": r"[0-9]{1,4}(@[0-9:-]{1,20})?", "distribution": _WORDS, "threads-per-core": _COUNT,
    "cores-per-socket": _COUNT, "sockets-per-node": _COUNT,
}
_OPTION = re.compile(r"--([a-z][a-z0-9-]{0,40})(?:=(.*))?", re.DOTALL)


def quote(word) -> str:
    """One shell word, whatever ``word`` holds."""
    return shlex.quote(str(word))


def sbatch_extra_problem(line: str) -> str | None:
    """What is wrong with ``line`` as an extra ``#SBATCH`` option, or None."""
    if not isinstance(line, str):
        return "not text"
    line = line.removeprefix("#SBATCH").strip()
    match = _OPTION.fullmatch(line)
    if match is None:
        return f"{line[:80]!r} is not one --option or --option=value"
    option, value = match.group(1), match.group(2)
    if option not in SBATCH_EXTRA:
        return (f"--{option} is not an option a profile may add (resources and scheduling only, e.g. --mem, "
                "--constraint, --qos, --gres: the list is in docs/how-to/run-on-slurm.md)")
    form = SBATCH_EXTRA[option]
    if form is None:
        return None if value is None else f"--{option} takes no value"
    if value is None or re.fullmatch(form, value) is None:
        return f"--{option}={(value or '')[:80]!r}: not a value this option takes here"
    return None


def check_sbatch_extra(line: str) -> str:
    problem = sbatch_extra_problem(line)
    if problem:
        raise ValueError(problem)
    return line.removeprefix("#SBATCH").strip()
