"""Two renders of one site at once: each builds in a folder of its own and swaps it in by
renames, so both succeed and a whole site is left. (They used to share one staging folder, and
the second to start removed what the first was writing.)"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

from tests.snapshot_cut import one_grids_snapshot


def test_two_renders_of_the_published_site_at_once_both_succeed(project_root):
    one_grids_snapshot(project_root / "leaderboard")
    with gzip.open(project_root / "leaderboard" / "runs.jsonl.gz") as f:
        assert len(f.readlines()) == 6  # gemma3's six
    env = {**os.environ, "TQDM_DISABLE": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "suite.cli.main", "--root", str(project_root), "site",
                               "--published"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    site = project_root / "site" / "published"
    assert (site / "index.html").is_file() and (site / "findings.html").is_file()
    assert not [p.name for p in (project_root / "site").iterdir() if p.name.startswith(".")]  # nothing left over
