"""The site's page names and links, built from ids and names, never copied from a record.

Records are checked where they are read (suite.results.record_checks), but the site is also
rendered from a database an older posbench may have built; so every page name and link is
built here from an id or a spec name that passes the same check, and anything else gets no
page and a link to nowhere (``#``): no ``../`` in a page name, no ``javascript:`` in an href
(Jinja's autoescape stops markup, not a URL scheme).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from suite.results.record_checks import is_id, is_name

NOWHERE = "#"
# an arXiv identifier as specs write it ("arXiv 2402.17463", "arXiv:2104.09864"): new-style ids only
ARXIV = re.compile(r"arXiv[: ]\s*(\d{4}\.\d{4,5})", re.IGNORECASE)


def encoding_page(name) -> str | None:
    """``encodings/<name>.html``, relative to the site's root; None for what is not a spec name."""
    return f"encodings/{name}.html" if is_name(name) else None


def run_page(run_id) -> str | None:
    """``runs/<run_id>.html``, relative to the site's root; None for what is not a run id."""
    return f"runs/{run_id}.html" if is_id(run_id) else None


def board_page(board_id) -> str | None:
    """``boards/<id>.html``; a board's id is a slug of names (suite.report.boards), checked again here."""
    return f"boards/{board_id}.html" if is_name(board_id) else None


def board_href(board_id, folder: str = "boards/") -> str:
    """The link to a board's page from a page that sees the boards' pages in ``folder``."""
    return f"{folder}{board_id}.html" if board_page(board_id) else NOWHERE


def paper_href(paper) -> str:
    """A link to an encoding's paper from its spec's ``paper`` text: its arXiv page where the text
    names an arXiv id, else an arXiv search for the text before the first comma's title part.
    Built from a fixed https prefix and a quoted query, so no spec text becomes a scheme or a path."""
    if not isinstance(paper, str) or not paper.strip():
        return NOWHERE
    found = ARXIV.search(paper)
    if found:
        return f"https://arxiv.org/abs/{found.group(1)}"
    title = paper.split(",", 1)[1] if "," in paper else paper
    title = title.split("(", 1)[0].strip()  # "(ICLR 2025, Eqs. 4-5)": venue and equations are not the title
    return "https://arxiv.org/search/?searchtype=title&query=" + quote(title[:200])


def encoding_href(name, folder: str = "encodings/") -> str:
    """The link to an encoding's page; ``folder`` is where the encodings' pages lie as seen from the
    linking page (``encodings/`` from the index, ``../encodings/`` from a run's page, ``""`` from
    another encoding's): a constant of the template, never data."""
    return f"{folder}{name}.html" if encoding_page(name) else NOWHERE


def run_href(run_id, folder: str = "runs/") -> str:
    """The link to a training run's page, from a page that sees the runs' pages in ``folder``."""
    return f"{folder}{run_id}.html" if run_page(run_id) else NOWHERE


FILTERS = {"encoding_href": encoding_href, "run_href": run_href, "board_href": board_href, "paper_href": paper_href}
