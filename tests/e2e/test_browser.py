"""The site in a real browser: headless Chromium (Debian's ``chromium``) driven over the Chrome
DevTools protocol, on a site rendered from a small real grid with two seeds and a one-seed board.

Checks: no console errors; no request leaves file://; every link resolves; sorting follows each
metric's direction; a board page's filter hides rows and their lines; the compare view overlays
two chosen encodings; a two-seed cell shows an interval and a one-seed board says "one seed";
nothing scrolls sideways at 390 px; a screenshot of the index is kept (tmp dir, and
results/test-artifacts/index.png). The published site under a sub-path: test_published_site.py.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from suite.report import stats
from suite.cli.main import main
from suite.results.rows import lower_is_better
from suite.report.leaderboard import build
from suite.results.store import connect_readonly

from tests.conftest import REPO, write_yaml
from tests.report.test_site import collect

websocket = pytest.importorskip("websocket", reason="needs websocket-client (pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(shutil.which("chromium") is None,
                                reason="needs Debian's chromium (scripts/install-system-deps.sh installs it as root)")


class Browser:
    """Headless Chromium driven over the DevTools protocol (one websocket, one page)."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900):
        self.profile = Path(profile)
        self.profile.mkdir(parents=True, exist_ok=True)
        self.log = open(self.profile / "chromium.log", "w")
        self.proc = subprocess.Popen(
            [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--remote-debugging-port=0",
             "--remote-allow-origins=*", f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"], stdout=self.log, stderr=self.log)
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        self.ws = websocket.create_connection(self._browser_url(), timeout=60)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.resize(width, height)

    def _browser_url(self) -> str:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited: {(self.profile / 'chromium.log').read_text()[-2000:]}")
            if port_file.is_file():
                lines = port_file.read_text().split()
                if len(lines) >= 2:
                    return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        msg = {"id": next(self.ids), "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _wait_for(self, method: str, since: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events[since:]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {timeout}s")
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        self.ws.settimeout(60)

    def open(self, url: str) -> None:
        since = len(self.events)
        self.call("Page.navigate", {"url": url}, session=True)
        self._wait_for("Page.loadEventFired", since)

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (an exception there fails the call)."""
        out = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                        session=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}...: {out['exceptionDetails']}")
        return out["result"].get("value")

    def resize(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}, session=True)

    def screenshot(self, path: Path, max_height: int = 6000) -> Path:
        height = min(int(self.js("document.documentElement.scrollHeight")), max_height)
        width = int(self.js("window.innerWidth"))
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": width, "height": height,
                                                             "scale": 1}}, session=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"{p['entry'].get('url', '')}: {p['entry']['text']}")
        return out

    def requests(self) -> list[str]:
        """The URL of every request the page made."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:  # noqa: BLE001 (closing anyway)
            pass
        self.ws.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory, text_folder) -> Path:
    """A real `posbench run` of a two-seed grid (with a training-free variant and GLUE-style scores)
    and of a one-seed synthetic-task grid into the same results; returns the rendered site."""
    root = tmp_path_factory.mktemp("browser")
    for folder in ("encodings", "sizes", "tasks", "grids"):
        shutil.copytree(REPO / folder, root / folder)
    write_yaml(root / "tasks" / "local.yaml",
               {"name": "local", "kind": "lm", "corpus": {"kind": "folder", "path": str(text_folder), "glob": "*.py"}})
    train = {"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2}
    two_seeds = write_yaml(root / "grids" / "two-seeds.yaml", {
        "name": "two-seeds", "encodings": ["nope", "alibi", "rope", "yarn"], "sizes": ["tiny"], "tasks": ["local"],
        "seeds": [0, 1], "scales": [1, 2, 4], "train": train,
        "eval": {"tokens": 2048, "batch_size": 4, "curve_buckets": 8, "lmeval_rolling": False},
        "glue": {"tasks": ["order"], "steps": 3, "batch_size": 4, "budget": 0.02}})
    one_seed = write_yaml(root / "grids" / "one-seed.yaml", {
        "name": "one-seed", "encodings": ["nope", "alibi"], "sizes": ["tiny"], "tasks": ["flip_flop"], "seeds": [0],
        "scales": [1, 2], "train": train, "task_train": train,
        "eval": {"tokens": 2048, "batch_size": 4, "curve_buckets": 8, "task_examples": 16, "lmeval_rolling": False}})
    for grid in (one_seed, two_seeds):
        assert main(["--root", str(root), "run", str(grid), "--quiet"]) == 0
    return root / "site" / "_build"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def visible_values(browser: Browser, table_id: str, col: int) -> list[str]:
    return browser.js(f"""Array.prototype.filter.call(document.getElementById({json.dumps(table_id)}).tBodies[0].rows,
        function (r) {{ return r.offsetParent !== null; }}).map(function (r) {{ return r.cells[{col}].dataset.value; }})""")


def column_of(browser: Browser, table_id: str, key: str) -> int:
    return browser.js(f"""Array.prototype.findIndex.call(document.getElementById({json.dumps(table_id)}).tHead.rows[0].cells,
        function (th) {{ return th.dataset.col === {json.dumps(key)}; }})""")


def test_pages_load_without_errors_and_never_leave_file(site, browser):
    pages = [*sorted(site.glob("*.html")), *sorted(site.glob("boards/*.html")), *sorted(site.glob("encodings/*.html")),
             *sorted(site.glob("runs/*.html"))[:3]]
    for page in pages:
        browser.open(page.as_uri())
    assert browser.errors() == []
    requests = browser.requests()
    assert requests and all(url.startswith(("file://", "data:")) for url in requests), requests


def test_every_link_resolves(site):
    for page in [*site.glob("*.html"), *site.glob("*/*.html")]:
        ids, links = collect(page.read_text())
        for href in links:
            target, _, fragment = href.partition("#")
            if target.startswith("https://arxiv.org/"):
                continue  # an encoding's paper: the one external link
            assert "://" not in target, (page, href)  # nothing else external
            if target:
                assert (page.parent / target).resolve().is_file(), (page, href)
            else:
                assert fragment in ids, (page, href)


def test_sorting_follows_each_metrics_direction(site, browser):
    for table, metric in (("t-lm-tiny-local", "bpb"), ("t-task-tiny-flip_flop-acc", "acc")):
        browser.open((site / "boards" / f"{table[2:]}.html").as_uri())
        col = column_of(browser, table, "s1")
        assert col > 0
        browser.js(f"document.getElementById('{table}').tHead.rows[0].cells[{col}].click()")
        first = [float(v) for v in visible_values(browser, table, col) if v]
        best_first = sorted(first, reverse=not lower_is_better(metric))
        assert len(first) >= 2 and first == best_first
        browser.js(f"document.getElementById('{table}').tHead.rows[0].cells[{col}].click()")
        assert [float(v) for v in visible_values(browser, table, col) if v] == best_first[::-1]


def test_a_filter_hides_rows_and_their_lines(site, browser):
    browser.open((site / "boards" / "lm-tiny-local.html").as_uri())
    families = browser.js("""Array.prototype.map.call(document.querySelectorAll('#t-lm-tiny-local tbody tr'),
                             function (r) { return r.dataset.family; })""")
    assert len(set(families)) > 1
    browser.js("""var s = document.querySelector('#filters select[name=family]'); s.value = 'bias';
                  s.dispatchEvent(new Event('change', {bubbles: true}));""")
    shown = browser.js("""Array.prototype.filter.call(document.querySelectorAll('#t-lm-tiny-local tbody tr'),
                          function (r) { return r.offsetParent !== null; }).map(function (r) { return r.dataset.encoding; })""")
    assert len(shown) == families.count("bias") and len(shown) < len(families)
    # every plot of the board (its lines and, on a language-modelling board, the extrapolation
    # figure's points) shows the shown rows only; the lines plot shows all of them
    plots = browser.js("""Array.prototype.map.call(document.querySelectorAll('svg.plot'), function (svg) {
                          return Array.prototype.filter.call(svg.querySelectorAll('g.series'),
                            function (g) { return getComputedStyle(g).display !== 'none'; })
                            .map(function (g) { return g.dataset.key; }); })""")
    assert sorted(plots[0]) == sorted(shown) and all(set(keys) <= set(shown) for keys in plots)
    assert browser.js("location.search") == "?family=bias"
    browser.open((site / "boards" / "lm-tiny-local.html").as_uri() + "?family=bias")  # the address keeps the filter
    assert browser.js("document.querySelector('#filters select[name=family]').value") == "bias"
    assert browser.js("""Array.prototype.filter.call(document.querySelectorAll('#t-lm-tiny-local tbody tr'),
                         function (r) { return r.offsetParent !== null; }).length""") == len(shown)


def test_the_compare_view_overlays_two_chosen_encodings(site, browser):
    browser.open((site / "compare.html").as_uri())
    browser.js("""document.querySelectorAll('#picker input').forEach(function (i) {
                    i.checked = i.value === 'nope' || i.value === 'alibi'; });
                  document.getElementById('picker').dispatchEvent(new Event('change'));""")
    shown = browser.js("""Array.prototype.filter.call(document.querySelectorAll('#cmp-lm-tiny-local svg .series'),
                          function (g) { return getComputedStyle(g).display !== 'none'; })
                          .map(function (g) { return g.dataset.key; })""")
    assert sorted(shown) == ["alibi", "nope"]
    pairs = browser.js("""Array.prototype.map.call(document.querySelectorAll('#pairs-lm-tiny-local tbody tr'),
                          function (r) { return r.textContent; })""")
    assert len(pairs) == 1 and "NoPE" in pairs[0] and "[" in pairs[0]  # a difference with its interval
    lo, hi = browser.js("""(function (td) { return [parseFloat(td.dataset.lo), parseFloat(td.dataset.hi)]; })
                           (document.querySelector('#pairs-lm-tiny-local tbody tr').cells[1])""")
    with connect_readonly(site.parent.parent / "results" / "posbench.duckdb") as con:
        lm = build(con).find("lm-tiny-local")
    seeds = {e.encoding: e.per_seed["s1"] for e in lm.entries}
    expected = stats.paired_comparison(seeds["alibi"], seeds["nope"]).interval  # the same interval as suite.report.stats
    assert (lo, hi) == pytest.approx((expected.lo, expected.hi), rel=1e-6)


def test_intervals_for_two_seeds_and_one_seed_said(site, browser):
    browser.open((site / "boards" / "lm-tiny-local.html").as_uri())
    ci = browser.js("document.querySelector('#t-lm-tiny-local tbody td.c-s1 .ci').textContent")
    assert ci.startswith("\u00b1") and float(ci[1:]) >= 0
    browser.open((site / "boards" / "task-tiny-flip_flop-acc.html").as_uri())
    one = browser.js("document.getElementById('task-tiny-flip_flop-acc').textContent")
    assert "one seed" in one.lower()


def test_the_index_fits_a_phone_and_a_screenshot_is_kept(site, browser, tmp_path):
    browser.resize(390, 844)
    browser.open((site / "index.html").as_uri())
    assert browser.js("document.documentElement.scrollWidth") <= 390
    browser.resize(1280, 900)
    browser.open((site / "index.html").as_uri())
    shot = browser.screenshot(tmp_path / "index.png")
    assert shot.stat().st_size > 10_000
    artifacts = REPO / "results" / "test-artifacts"
    try:
        artifacts.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, artifacts / "index.png")
    except OSError:
        pass  # a read-only checkout keeps the one in the tmp dir
