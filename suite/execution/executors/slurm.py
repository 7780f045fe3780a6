"""The SLURM executor: one job array over a grid's pending training runs.

``posbench run GRID --executor slurm`` writes, under ``results/slurm/<timestamp>/``,

* ``manifest.json``: the training runs with work left, each with the evaluations on it
  still to do (:mod:`suite.execution.manifest`). Evaluations run inside their run's task, right
  after training, on the weights in memory: no dependent array, no second queue wait;
* ``job.sbatch``: ``#SBATCH --array=0-N%K`` with ``--requeue`` and
  ``--signal=SIGUSR1@90``; each task runs ``srun posbench run-one MANIFEST
  $SLURM_ARRAY_TASK_ID`` (one srun task per device, so Lightning's SLURMEnvironment
  sees the ranks and owns DDP and requeue);

submits it with ``sbatch --parsable`` and writes ``job_id`` beside them. Logs go to
``<that folder>/<job id>_<task>.out``, appended to across requeues. Tasks write record
files only; ``posbench status GRID --ingest`` builds the database once they are there.
"""

from __future__ import annotations

import datetime
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pydantic

from suite.core import numerics
from suite.core.boundary.names import check_name
from suite.core.boundary.shell import check_sbatch_extra, quote
from suite.core.boundary.text import text_problem
from suite.core.boundary.atomic import write_atomic
from suite.execution.manifest import manifest_of, write_manifest
from suite.execution.executors.base import EXECUTORS, Executor

PROFILES_FILE = "slurm-profiles.yaml"


# What sbatch accepts, and nothing that could end an #SBATCH line or start a shell line: a profile
# file may come from anyone (a pull request), and its values are written into a script.
NAME_LIST = r"^[A-Za-z0-9_.+-]+(,[A-Za-z0-9_.+-]+)*$"  # a partition, an account (or a comma list of them)
# sbatch --time: [D-]H[:M[:S]], M, M:S; ASCII digits ([0-9], not \d, which takes any script's digits)
DURATION = r"^(?i:unlimited|infinite)$|^([0-9]+-)?[0-9]+(:[0-9]{1,2}){0,2}$"


class Profile(pydantic.BaseModel):
    """A named set of sbatch settings in slurm-profiles.yaml; command-line options override it."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    partition: str | None = pydantic.Field(None, pattern=NAME_LIST, max_length=200)
    account: str | None = pydantic.Field(None, pattern=NAME_LIST, max_length=200)
    time: str | None = pydantic.Field(None, pattern=DURATION, max_length=40)  # sbatch's --time, e.g. "04:00:00"
    nodes: int = pydantic.Field(1, ge=1, le=100_000)  # nodes per training run (DDP across them)
    gpus_per_node: int = pydantic.Field(0, ge=0, le=1024)  # 0: CPU; G: G srun tasks per node, one GPU each
    cpus_per_task: int | None = pydantic.Field(None, ge=1, le=100_000)
    max_concurrent: int | None = pydantic.Field(None, ge=1, le=1_000_000)  # the array's %K
    # more #SBATCH lines, e.g. "--mem=32G": one option each, from the allow-list of
    # suite.core.boundary.shell (resources and scheduling; never --output, --chdir, --export)
    sbatch_extra: tuple[Annotated[str, pydantic.Field(max_length=400), pydantic.AfterValidator(check_sbatch_extra)],
                        ...] = ()


def load_profiles(path: Path) -> dict[str, Profile]:
    """Every profile of ``path``, checked like a spec: all problems at once as SpecErrors, each
    ``file:line: profiles.NAME.field: message``."""
    from suite.core.yamldoc import SpecErrors, read_yaml

    doc = read_yaml(path)
    if doc.problems:
        raise SpecErrors(doc.problems)
    data = doc.data if isinstance(doc.data, dict) else {}
    extra = [doc.error((key,), "unknown key (the file holds 'profiles:')") for key in data if key != "profiles"]
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise SpecErrors(extra + [doc.error(("profiles",), "must be a mapping of profile names to settings")])
    out, errors = {}, extra
    for name, body in profiles.items():
        try:
            out[name] = Profile.model_validate(body if body is not None else {})
        except pydantic.ValidationError as exc:
            errors += [doc.error(("profiles", name, *e["loc"]), "unknown key" if e["type"] == "extra_forbidden"
                                 else e["msg"]) for e in exc.errors()]
    if errors:
        raise SpecErrors(errors)
    return out


def load_profile(path: Path, name: str | None) -> Profile:
    if name is None:
        return Profile()
    if not path.is_file():
        raise FileNotFoundError(f"--profile {name}: no profiles file {path}")
    profiles = load_profiles(path)
    if name not in profiles:
        from suite.core.registry import did_you_mean

        raise KeyError(f"{path}: no profile '{name}'{did_you_mean(name, list(profiles))}; known: {', '.join(profiles)}")
    return profiles[name]


def settings_from(args, root: Path) -> Profile:
    """The profile (if any), with every option given on the command line on top."""
    profile = load_profile(Path(args.profiles_file) if args.profiles_file else root / PROFILES_FILE, args.profile)
    given = {field: getattr(args, field) for field in Profile.model_fields if getattr(args, field) not in (None, [])}
    if "sbatch_extra" in given:
        given["sbatch_extra"] = (*profile.sbatch_extra, *given["sbatch_extra"])
    try:
        return Profile.model_validate({**profile.model_dump(), **given})
    except pydantic.ValidationError as exc:  # a command-line value sbatch would not take
        raise ValueError("; ".join(f"--{str(e['loc'][0]).replace('_', '-')}: {e['msg']}" for e in exc.errors())) from None


def script_word(value, what: str) -> str:
    """A value of the script (a path, a name) as one shell word; ValueError when it holds a
    character no line of a script may hold (a newline ends an #SBATCH line whatever the quoting)."""
    problem = text_problem(str(value), max_chars=4096)
    if problem:
        raise ValueError(f"{what}: {problem}")
    return quote(value)


def sbatch_script(settings: Profile, n_tasks: int, folder: Path, manifest: Path, root: Path, name: str) -> str:
    """The job-array script: one task per manifest entry. Every word that is not the script's
    own is quoted, and the grid's name, the folder and the root are refused (ValueError) when
    they hold a character that could end a line (suite.core.boundary)."""
    check_name(name, "the grid's name")
    output = script_word(f"{folder}/%A_%a.out", "the submission folder")
    root_word = script_word(root, "the project root")
    script_word(manifest, "the manifest")
    devices = max(1, settings.gpus_per_node)
    limit = f"%{settings.max_concurrent}" if settings.max_concurrent else ""
    lines = [f"--job-name=posbench-{name}", f"--array=0-{n_tasks - 1}{limit}", f"--nodes={settings.nodes}",
             f"--ntasks-per-node={devices}", "--requeue", "--signal=SIGUSR1@90", "--open-mode=append",
             f"--output={output}"]
    lines += [f"--{flag}={value}" for flag, value in (("partition", settings.partition), ("account", settings.account),
                                                       ("time", settings.time), ("cpus-per-task", settings.cpus_per_task))
              if value is not None]
    lines += [f"--gpus-per-node={settings.gpus_per_node}"] if settings.gpus_per_node else []
    lines += [check_sbatch_extra(line) for line in settings.sbatch_extra]
    task = [sys.executable, "-m", "suite.cli.main", "--root", str(root), "run-one", str(manifest)]
    srun = (f"srun {shlex.join(task)} \"$SLURM_ARRAY_TASK_ID\" "
            f"--devices {devices} --nodes {settings.nodes}")
    return "\n".join([
        "#!/bin/bash",
        f"# posbench: {n_tasks} training run(s) of grid {name} with their evaluations (written by posbench run)",
        *(f"#SBATCH {line}" for line in lines),
        "set -euo pipefail",
        f"cd {root_word}",
        # the numerics every task computes with (suite.core.numerics), whatever the node's cores
        *numerics_exports(settings),
        'echo "posbench: task $SLURM_ARRAY_TASK_ID of array $SLURM_ARRAY_JOB_ID on $(hostname),'
        ' restart ${SLURM_RESTART_COUNT:-0}, $(date -Is)"',
        srun,
        "",
    ])


def numerics_exports(settings: Profile) -> list[str]:
    """The script's ``export`` lines of the numerics. A CPU task computes on the threads asked
    for (its figures depend on them); a GPU task's arithmetic is on the GPU, so its CPU side
    (batches, evaluation bookkeeping) gets the CPUs SLURM gave it."""
    lines = [f"export {name}={shlex.quote(value)}" for name, value in numerics.requested().variables().items()]
    if settings.gpus_per_node:
        lines.append(f'export {numerics.THREADS_ENV}="${{SLURM_CPUS_PER_TASK:-1}}"')
    return lines


def new_submission_folder(project) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in range(100):
        folder = project.results / "slurm" / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"{project.results / 'slurm'}: no free folder for {stamp}")


@EXECUTORS.register("slurm")
class Slurm(Executor):
    """Submits the pending work as one SLURM job array and returns; records arrive later."""

    submits = True

    @staticmethod
    def add_arguments(parser) -> None:
        group = parser.add_argument_group("slurm executor (see slurm-profiles.yaml)")
        group.add_argument("--profile", help=f"slurm: a named profile in {PROFILES_FILE} at the project root")
        group.add_argument("--profiles-file", help=f"slurm: the profiles file (default <root>/{PROFILES_FILE})")
        group.add_argument("--partition", help="slurm: partition")
        group.add_argument("--account", help="slurm: account to charge")
        group.add_argument("--time", help="slurm: time limit per task, e.g. 04:00:00")
        group.add_argument("--nodes", type=int, help="slurm: nodes per training run (default 1)")
        group.add_argument("--gpus-per-node", dest="gpus_per_node", type=int,
                           help="slurm: GPUs per node, one srun task (DDP rank) each (default 0: CPU, one task)")
        group.add_argument("--cpus-per-task", dest="cpus_per_task", type=int, help="slurm: CPUs per srun task")
        group.add_argument("--max-concurrent", dest="max_concurrent", type=int, metavar="K",
                           help="slurm: at most K array tasks at once (the array's %%K)")
        group.add_argument("--sbatch-extra", dest="sbatch_extra", action="append", default=[], metavar="LINE",
                           help="slurm: one more #SBATCH line, e.g. --sbatch-extra=--mem=32G (repeatable)")
        group.add_argument("--dry-run", action="store_true", help="slurm: write and print the script and manifest; submit nothing")

    def run(self, plan, project, console, args) -> int:
        try:
            settings = settings_from(args, project.root)
        except (KeyError, ValueError) as exc:
            console.print(f"error: {exc.args[0]}", markup=False, soft_wrap=True)
            return 1
        grid_name = Path(args.grid).stem
        try:
            check_name(grid_name, f"{args.grid}: the grid's file name")
        except ValueError as exc:
            console.print(f"error: {exc}", markup=False, soft_wrap=True)
            return 1
        manifest = manifest_of(plan, project, str(Path(args.grid).resolve()), args.retry_failed)
        if not manifest.entries:
            console.print("nothing to submit: every piece has a record")
            return 0
        folder = new_submission_folder(project)
        manifest_path = write_manifest(manifest, folder / "manifest.json")
        script = folder / "job.sbatch"
        try:
            text = sbatch_script(settings, len(manifest.entries), folder, manifest_path, project.root, grid_name)
        except ValueError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            console.print(f"error: {exc}", markup=False, soft_wrap=True)
            return 1
        write_atomic(script, text)
        console.print(f"manifest: {manifest_path} ({len(manifest.entries)} training run(s), "
                      f"{sum(len(e.evaluations) for e in manifest.entries)} evaluation(s) inside their run's task)")
        for i, entry in enumerate(manifest.entries):
            console.print(f"  [dim]{i}[/] {entry.runs[0].label} [dim]{entry.runs[0].run_id}[/]: "
                          f"{len(entry.evaluations)} evaluation(s)")
        if args.dry_run:
            console.print(f"sbatch script {script} (dry run: not submitted):")
            console.print(script.read_text(), markup=False, highlight=False, soft_wrap=True)
            return 0
        return submit(script, folder, console, Path(args.grid))


def submit(script: Path, folder: Path, console, grid: Path) -> int:
    if shutil.which("sbatch") is None:
        console.print(f"[red]sbatch not found[/]: submit {script} on a machine with SLURM")
        return 1
    done = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True)
    if done.returncode:
        console.print(f"[red]sbatch failed[/] ({done.returncode}): {done.stderr.strip()}", markup=False)
        return 1
    job_id = done.stdout.strip().split(";")[0]
    (folder / "job_id").write_text(job_id + "\n")
    console.print(f"submitted job array [bold]{job_id}[/]; logs: {folder}/{job_id}_<task>.out")
    console.print(f"watch: posbench status {grid}   (and squeue -j {job_id}); "
                  f"when it is done: posbench status {grid} --ingest")
    return 0


def submitted_jobs(project) -> list[tuple[Path, str]]:
    """(submission folder, job id) of every array submitted from this results folder, oldest first."""
    return [(p.parent, p.read_text().strip()) for p in sorted((project.results / "slurm").glob("*/job_id"))]


def job_states(job_id: str) -> dict[str, int]:
    """State -> number of the array's tasks, from squeue (queued and running) and sacct
    (finished, where accounting is on); {} when neither command is here."""
    states: dict[str, int] = {}
    seen: set[str] = set()
    commands = [["squeue", "-h", "-r", "-j", job_id, "-o", "%i %T"],
                ["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "JobID,State"]]
    for command in commands:
        if shutil.which(command[0]) is None:
            continue
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            continue
        for line in done.stdout.splitlines():
            task, _, state = line.replace("|", " ").partition(" ")
            if task and task not in seen:
                seen.add(task)
                state = state.split()[0] if state.split() else "?"
                states[state] = states.get(state, 0) + 1
    return states
