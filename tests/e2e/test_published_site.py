"""The published leaderboard as its readers get it: rendered from the committed snapshot
(``leaderboard/``) by ``posbench site --published``, served by ``python -m http.server`` under a
sub-path (as GitHub Pages serves a project's site, ``https://OWNER.github.io/REPO/``), and read in
headless Chromium: at 1280 px every kind's widest board shows its rank, names and headline figure
without scrolling sideways; an encoding has one colour on every page; the compare page opens on
two rows with data. Also: a board of 40 encodings whose plot shows its top rows, and 3 when
filtered to 3, each line in its encoding's own colour.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from suite.cli.main import main
from suite.report.shown import PLOT_TOP
from suite.report.site import render

from tests.conftest import REPO
from tests.e2e.test_browser import Browser
from tests.report import test_site

pytest.importorskip("websocket", reason="needs websocket-client (pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(shutil.which("chromium") is None,
                                reason="needs Debian's chromium (scripts/install-system-deps.sh installs it as root)")

SUB_PATH = "posbench"  # the repository's name, as a project's GitHub Pages address has it


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The published site at http://127.0.0.1:PORT/posbench/ (python -m http.server)."""
    root = tmp_path_factory.mktemp("published")
    shutil.copytree(REPO / "leaderboard", root / "leaderboard")
    assert main(["--root", str(root), "site", "--published"]) == 0
    serve = root / "serve"
    shutil.copytree(root / "site" / "published", serve / SUB_PATH)
    server = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                               "--directory", str(serve)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # its banner on stdout; each request is logged to stderr, dropped: a pipe nobody reads would fill and stall it
    try:
        line = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        port = re.search(r"port (\d+)", line).group(1)
        yield f"http://127.0.0.1:{port}/{SUB_PATH}/", serve / SUB_PATH
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile"), 1400, 900)
    yield b
    b.close()


def biggest_board(site: Path, prefix: str) -> str:
    """The id of the board of that kind with the most rows (its page's table rows)."""
    pages = sorted(site.glob(f"boards/{prefix}-*.html"))
    return max(pages, key=lambda p: (p.read_text().count("<tr data-family="), p.name)).stem


def visible_series(browser: Browser, selector: str) -> list[dict]:
    """The shown lines of the plots ``selector`` picks (a scatter's points, which have no line, left out)."""
    return browser.js(f"""Array.prototype.filter.call(document.querySelectorAll({json.dumps(selector)}),
        function (g) {{ return g.querySelector('polyline') && getComputedStyle(g).display !== 'none'; }}).map(function (g) {{
        return {{key: g.dataset.key, colour: g.querySelector('polyline').getAttribute('stroke')}}; }})""")


def test_the_published_site_under_a_sub_path_opens_without_errors(served, browser):
    """The index, an encoding's page, a board and the compare page with a selection from the URL."""
    base, site = served
    board = biggest_board(site, "lm")
    for page in ("index.html", "encodings/alibi.html", f"boards/{board}.html", "compare.html?enc=alibi,rope"):
        browser.open(base + page)
        assert browser.js("document.title") and browser.js("document.querySelector('h1').textContent") == "PosBench"
    assert browser.js("""Array.prototype.filter.call(document.querySelectorAll('#picker input'),
                         function (i) { return i.checked; }).map(function (i) { return i.value; })""") == ["alibi", "rope"]
    shown = visible_series(browser, f"#cmp-{board} svg g.series")
    assert sorted(s["key"] for s in shown) == ["alibi", "rope"]
    assert len({s["colour"] for s in shown}) == 2  # two colours of their own on that plot
    assert browser.js("location.search") == "?enc=alibi,rope"  # the selection stays in the address
    assert browser.errors() == []
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
    assert all(url.startswith((base, "data:")) for url in browser.requests()), browser.requests()
    assert all(urlsplit(url).path.startswith(f"/{SUB_PATH}/") for url in browser.requests() if url.startswith(origin))


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value and not value.startswith(("data:", "#")):
                self.links.append(value)


def test_no_link_of_the_published_site_is_broken(served):
    """Every link of every page, followed through the server under the sub-path (external links,
    the papers' arXiv pages, are https and left alone)."""
    base, site = served
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    targets: set[str] = set()
    for page in pages:
        parser = Links()
        parser.feed((site / page).read_text())
        for href in parser.links:
            if href.startswith("https://"):
                assert href.startswith("https://arxiv.org/"), (page, href)  # the only external links: papers
                continue
            assert "://" not in href and not href.startswith("/"), (page, href)  # relative: works under any sub-path
            targets.add(urljoin(base + page, href).split("#")[0])
    assert len(targets) > 50
    for url in sorted(targets):
        assert url.startswith(base), url
        try:
            with urllib.request.urlopen(url, timeout=30) as reply:
                assert reply.status == 200, url
        except urllib.error.HTTPError as err:
            pytest.fail(f"{url}: {err}")


def test_the_index_answers_the_questions_in_its_first_screen_and_is_short(served, browser):
    base, _ = served
    browser.resize(1400, 900)
    browser.open(base + "index.html")
    answers = browser.js("""Array.prototype.map.call(document.querySelectorAll('#answers > li'),
                            function (li) { return li.textContent.replace(/\\s+/g, ' ').trim(); })""")
    for question in ("language modelling", "length-generalization task", "GLUE-style", "Cheapest"):
        assert any(question.lower() in a.lower() for a in answers), (question, answers)
    assert browser.js("document.getElementById('answers').getBoundingClientRect().bottom") <= 900
    height = browser.js("document.documentElement.scrollHeight")
    assert height < 6000, height
    assert browser.js("document.documentElement.scrollWidth") <= 1400


def test_a_filter_on_a_published_board_acts_on_its_plot_and_table_alike(served, browser):
    base, site = served
    board = biggest_board(site, "lm")
    browser.open(base + f"boards/{board}.html")
    order = browser.js("Array.prototype.map.call(document.querySelectorAll('tbody tr[data-encoding]'), "
                       "function (r) { return r.dataset.encoding; })")
    rows = len(order)
    # a plot of 35+ rows shows its top rows, not 35 lines; its legend shows the others on demand
    assert rows > 20 and [s["key"] for s in visible_series(browser, "svg.plot g.series")] == order[:PLOT_TOP]
    browser.js("document.querySelector('#legend button[data-show=all]').click()")
    assert len(visible_series(browser, "svg.plot g.series")) == rows
    browser.js("document.querySelector('#legend button[data-show=top]').click()")
    browser.js("""var i = document.querySelector('#filters input[name=text]'); i.value = 'alibi, nope';
                  i.dispatchEvent(new Event('input', {bubbles: true}));""")
    shown_rows = browser.js("""Array.prototype.filter.call(document.querySelectorAll('tbody tr[data-encoding]'),
                               function (r) { return r.style.display !== 'none'; }).map(function (r) { return r.dataset.encoding; })""")
    assert 2 <= len(shown_rows) < rows
    assert sorted(s["key"] for s in visible_series(browser, "svg.plot g.series")) == sorted(shown_rows)
    assert browser.errors() == []


@pytest.fixture(scope="module")
def forty(tmp_path_factory):
    """A site with one language-modelling board of 40 encodings at 2 seeds (records written the
    way the runner writes them, figures chosen so that their order is known)."""
    names = [f"enc{i:02d}" for i in range(40)]
    added = {n: {"display_name": f"Encoding {i:02d}", "family": "rotary", "params": {"i": i}} for i, n in enumerate(names)}
    test_site.SPECS.update(added)
    try:
        root = tmp_path_factory.mktemp("forty")
        results = test_site.Results(root)
        for i, name in enumerate(names):
            for seed in (0, 1):
                run = results.run(name, seed)
                results.bpb(run, {1: 1.0 + i / 100 + seed / 1000, 2: 1.1 + i / 50 + seed / 1000})
        render(results.database(), root / "site")
    finally:
        for n in names:
            test_site.SPECS.pop(n)
    return root / "site", names


def test_a_plot_of_40_encodings_shows_its_top_rows_and_filtered_to_3_draws_3_lines_in_their_own_colours(forty, browser):
    site, names = forty
    browser.open((site / "boards" / "lm-tiny-lm.html").as_uri())
    first = visible_series(browser, "svg.plot g.series")
    assert [s["key"] for s in first] == names[:PLOT_TOP]  # the best rows (lowest bits per byte) first
    assert len({s["colour"] for s in first}) == PLOT_TOP  # the top rows: distinct colours
    before = browser.js("""Object.fromEntries(Array.prototype.map.call(document.querySelectorAll('svg.plot g.series > polyline'),
                           function (l) { return [l.parentElement.dataset.key, l.getAttribute('stroke')]; }))""")
    picked = ["enc31", "enc35", "enc39"]  # all three hidden before the filter: the filter shows them
    browser.js(f"""var i = document.querySelector('#filters input[name=text]'); i.value = {json.dumps(', '.join(picked))};
                   i.dispatchEvent(new Event('input', {{bubbles: true}}));""")
    shown = visible_series(browser, "svg.plot g.series")
    assert sorted(s["key"] for s in shown) == picked
    assert {s["key"]: s["colour"] for s in shown} == {k: before[k] for k in picked}  # their own, not the plot's
    swatches = browser.js("""Object.fromEntries(Array.prototype.map.call(document.querySelectorAll('tbody .swatch'),
                             function (s) { return [s.dataset.key, s.style.background]; }))""")
    assert len(before) == 40 and all(hex_to_rgb(before[k]) == swatches[k] for k in names)  # swatch and line alike
    assert browser.js("location.search").startswith("?text=")  # the filter stays in the address
    assert browser.errors() == []


def hex_to_rgb(colour: str) -> str:
    """'#1f77b4' as the browser reads a style back: 'rgb(31, 119, 180)'."""
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def widest_boards(site: Path) -> list[str]:
    """Of each kind of board, the one whose table has the most columns, then the most rows."""
    widest: dict[str, tuple] = {}
    for page in site.glob("boards/*.html"):
        html = page.read_text()
        kind = re.search(r'<section class="board" id="[^"]+"[^>]* data-kind="([^"]+)"', html).group(1)
        size = (html.count("<th data-col="), html.count("<tr data-family="), page.stem)
        widest[kind] = max(widest.get(kind, size), size)
    return sorted(size[2] for size in widest.values())


def test_every_kinds_widest_board_fits_1280_px_with_its_rank_names_and_headline_figure(served, browser):
    """In Chromium at 1280 px: the table scrolls not sideways; its rank, encoding name and the column
    it ranks by (its headline's figure) are on screen; the columns left out are a click away; and
    every encoding has one colour on every page read here (swatches, lines, points, legends)."""
    base, site = served
    browser.resize(1280, 900)
    boards = widest_boards(site)
    assert len(boards) >= 6 and "lm-tiny-lm-l64-1000x16" in boards  # the 41-row, 15-column board
    colours: dict[str, set] = {}
    swatched: set[str] = set()

    def read_colours():
        swatched.update(browser.js("Array.prototype.map.call(document.querySelectorAll('.swatch[data-key]'), "
                                   "function (s) { return s.dataset.key; })"))
        found = browser.js("""Array.prototype.concat.call([],
            Array.prototype.map.call(document.querySelectorAll('.swatch[data-key]'), function (s) {
              return [s.dataset.key, getComputedStyle(s).backgroundColor]; }),
            Array.prototype.map.call(document.querySelectorAll('svg g.series[data-key] > polyline, svg g.series[data-key] > circle, g.legend-item > line, #legend line'), function (el) {
              var key = (el.closest('[data-key]') || {}).dataset.key;
              var c = el.getAttribute('stroke') || el.getAttribute('fill'); var s = document.createElement('span');
              s.style.color = c; document.body.appendChild(s); var rgb = getComputedStyle(s).color; s.remove();
              return [key, rgb]; }))""")
        for key, colour in found:
            colours.setdefault(key, set()).add(colour)

    for board in boards:
        browser.open(base + f"boards/{board}.html")
        fit = browser.js(f"""(function () {{
            var table = document.getElementById('t-{board}'), box = table.parentElement;
            var head = Array.prototype.slice.call(table.tHead.rows[0].cells);
            var must = head.filter(function (th) {{ return th.classList.contains('name') || th.dataset.keep === '0'; }});
            return {{scroll: box.scrollWidth, width: box.clientWidth, page: document.documentElement.scrollWidth,
                     must: must.map(function (th) {{ var r = th.getBoundingClientRect();
                       return [th.dataset.col || 'name', getComputedStyle(th).display !== 'none' && r.width > 0 && r.right <= 1280]; }}),
                     hidden: head.filter(function (th) {{ return getComputedStyle(th).display === 'none'; }}).length,
                     offered: document.querySelectorAll('details.columns[data-table="t-{board}"] input:not(:checked)').length}};
        }})()""")
        assert fit["scroll"] <= fit["width"] and fit["page"] <= 1280, (board, fit)
        assert all(ok for _, ok in fit["must"]) and {"name"} < {c for c, _ in fit["must"]}, (board, fit)
        assert fit["hidden"] == fit["offered"], (board, fit)  # every column left out has its checkbox
        if board.startswith(("lm-", "task-")):  # ranked boards: the rank and the ranked column are among them
            assert {"rank", "s16"} <= {c for c, _ in fit["must"]}, (board, fit)
        read_colours()
    for page in ("index.html", "compare.html", "encodings/alibi.html", "encodings/rope.html"):
        browser.open(base + page)
        read_colours()
    encodings = set(swatched)  # a loss-vs-position plot's series are scales ("1x"), not encodings
    assert len(encodings) > 40 and {k: v for k, v in colours.items() if k in encodings and len(v) != 1} == {}
    assert browser.errors() == []


def test_the_compare_page_opens_on_the_canonical_boards_leaders_with_data(served, browser):
    base, _ = served
    browser.open(base + "index.html")
    canonical = browser.js("document.querySelector('#answers > li a[href^=\"boards/\"]').getAttribute('href')")
    board = canonical.split("/")[-1].removesuffix(".html")
    browser.open(base + canonical)
    leaders = browser.js("Array.prototype.map.call(document.querySelectorAll('tbody tr[data-encoding]'), "
                         "function (r) { return r.dataset.encoding; }).slice(0, 2)")
    browser.open(base + "compare.html")
    chosen = browser.js("""Array.prototype.filter.call(document.querySelectorAll('#picker input'),
                           function (i) { return i.checked; }).map(function (i) { return i.value; })""")
    assert sorted(chosen) == sorted(leaders)
    shown = visible_series(browser, f"#cmp-{board} svg g.series")
    assert sorted(s["key"] for s in shown) == sorted(leaders)
    assert browser.js(f"document.querySelectorAll('#pairs-{board} tbody tr').length") == 1  # their difference
    assert browser.errors() == []
