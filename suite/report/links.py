"""The site's page names and links, built from ids and names, never copied from a record.

Records are checked where they are read (suite.results.record_checks), but the site is also
rendered from a database an older posbench may have built; so every page name and link is
built here from an id or a spec name that passes the same check, and anything else gets no
page and a link to nowhere (``#``): no ``../`` in a page name, no ``javascript:`` in an href
(Jinja's autoescape stops markup, not a URL scheme).
"""

from __future__ import annotations

from suite.results.record_checks import is_id, is_name

NOWHERE = "#"


def encoding_page(name) -> str | None:
    """``encodings/<name>.html``, relative to the site's root; None for what is not a spec name."""
    return f"encodings/{name}.html" if is_name(name) else None


def run_page(run_id) -> str | None:
    """``runs/<run_id>.html``, relative to the site's root; None for what is not a run id."""
    return f"runs/{run_id}.html" if is_id(run_id) else None


def encoding_href(name, folder: str = "encodings/") -> str:
    """The link to an encoding's page; ``folder`` is where the encodings' pages lie as seen from the
    linking page (``encodings/`` from the index, ``../encodings/`` from a run's page, ``""`` from
    another encoding's): a constant of the template, never data."""
    return f"{folder}{name}.html" if encoding_page(name) else NOWHERE


def run_href(run_id, folder: str = "runs/") -> str:
    """The link to a training run's page, from a page that sees the runs' pages in ``folder``."""
    return f"{folder}{run_id}.html" if run_page(run_id) else NOWHERE


FILTERS = {"encoding_href": encoding_href, "run_href": run_href}
