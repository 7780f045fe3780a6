"""``posbench submit NAME``: what a pull request for a new encoding needs, in one folder.

It is refused unless the project's records hold every run of the standard grid with the
encoding in it (suite.submission.standard): a smoke run is no submission.
``submissions/<name>/`` holds the spec, the plugin and its tests as ``posbench new-encoding``
laid them out (copied from the project), the records of every training run trained as the
encoding and every evaluation of it (gzip JSON lines, as the published snapshot holds them,
with their per-sample outputs), and ``verify.txt``: ``posbench verify`` of one of those runs,
retrained here and compared within the stated tolerance. A reviewer merges the records into
``leaderboard/`` (``posbench publish``) once the plugin is read and the check reproduced.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from suite.core.boundary.paths import OutsideProject, own_path
from suite.results.record_checks import samples_path
from suite.results.records import scan
from suite.results.snapshot_files import EVALS, RUNS, SAMPLES, write_lines
from suite.specs import Project
from suite.submission.scaffold import MAX_ENCODING_NAME, NAME, paths
from suite.submission.standard import STANDARD, NotStandard, check_standard


class SubmitError(Exception):
    pass


@dataclass(frozen=True)
class Bundle:
    folder: Path
    files: list[Path]
    runs: int
    evaluations: int
    verified: bool


def submit(project: Project, name: str, verify_log=print, grid: str = STANDARD) -> Bundle:
    """Bundle ``name``'s records; refused, with nothing written, unless they hold every run of
    the standard grid (``grid``: suite.submission.standard)."""
    from suite.submission.verify import verify

    if not NAME.fullmatch(name) or len(name) > MAX_ENCODING_NAME:
        raise SubmitError(f"'{name[:MAX_ENCODING_NAME]}' is not an encoding name (lower-case letters, digits, '-', '_')")
    spec, plugin, test = paths(project, name)
    if not spec.is_file():
        raise SubmitError(f"no spec {spec}: `posbench new-encoding {name}` writes one")
    runs = [r for r in scan(project.runs, "training_run").records if r.encoding == name and r.status == "done"]
    evals = [r for r in scan(project.evals, "evaluation").records
             if (r.encoding == name or r.run_id in {x.run_id for x in runs}) and r.status == "done"]
    if not runs and not evals:
        raise SubmitError(f"no done record of {name} in {project.results}: run a grid with it first "
                          f"(`posbench run grids/{grid}.yaml --with-published`, with it among the encodings)")
    folder = project.root / "submissions" / name
    try:  # a link here (or at submissions/) would have the bundle written wherever it points
        own_path(project.root, folder)
    except OutsideProject as exc:
        raise SubmitError(f"{exc}; nothing written") from None
    try:
        check_standard(project, name, runs, evals, grid)
    except NotStandard as exc:
        raise SubmitError(str(exc)) from None
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "records" / SAMPLES).mkdir(parents=True)
    files = []
    for source in (spec, plugin, test):
        if source.is_file():
            target = folder / source.relative_to(project.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            files.append(target)
    write_lines(folder / "records" / RUNS, runs)  # as the snapshot holds them: no machine paths
    write_lines(folder / "records" / EVALS, evals)
    for record in evals:
        if record.samples:  # the file its id names, not the path the record states
            shutil.copyfile(samples_path(project.samples, record.eval_id), samples_path(folder / "records" / SAMPLES,
                                                                                         record.eval_id))
    files += [folder / "records" / RUNS, folder / "records" / EVALS]
    verified = False
    lines = []
    if runs:
        cheapest = min(runs, key=lambda r: (r.provenance.train_wall_s or 0, r.run_id))
        result = verify(project.runs / f"{cheapest.run_id}.json", project, log=lines.append)
        lines += result.lines
        verdict = "MISMATCH" if result.mismatches else "match"
        lines.append(f"{verdict}: {result.matched} of {result.compared} figure(s) match")
        verified = not result.mismatches
    else:
        lines.append(f"no training run of {name} (a training-free variant): its evaluations are checked by "
                     "`posbench verify` of the checkpoint's run")
    (folder / "verify.txt").write_text("\n".join(lines) + "\n")
    files.append(folder / "verify.txt")
    for line in lines:
        verify_log(line)
    return Bundle(folder, files, len(runs), len(evals), verified)
