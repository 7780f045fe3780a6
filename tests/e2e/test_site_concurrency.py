"""Two renders of one site at once: each builds in a folder of its own and swaps it in by
renames, so both succeed and a whole site is left. (They used to share one staging folder, and
the second to start removed what the first was writing.)"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.snapshot_cut import cut_snapshot


def test_two_renders_of_the_published_site_at_once_both_succeed(project_root):
    # gemma3's six runs: a real snapshot whose site takes seconds to render, not the whole one's
    # minute, so two renders still overlap without holding both cores for a minute
    assert cut_snapshot(project_root / "leaderboard", ["gemma3"], lambda run: run["size"] == "tiny-6l")[0] == 6
    env = {**os.environ, "TQDM_DISABLE": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "suite.cli.main", "--root", str(project_root), "site",
                               "--published"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    site = project_root / "site" / "published"
    assert (site / "index.html").is_file() and (site / "findings.html").is_file()
    assert not [p.name for p in (project_root / "site").iterdir() if p.name.startswith(".")]  # nothing left over
