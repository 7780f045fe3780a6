"""DuckDB -> Jinja2 -> a static leaderboard site that works from file:// offline.

* :mod:`.boards`: boards from per-seed figures (means, intervals, ranks, warnings);
* :mod:`.leaderboard`: every board, with the GLUE-style and cost boards of whole checkpoints
  (the site and the terminal, :mod:`suite.report.terminal`, both render these);
* :mod:`.summary`: the header that states the run, the GLUE-style battery's documentation;
* :mod:`.pages`: ``index.html`` (boards, plots, coverage, downloads), ``compare.html``,
  ``encodings/<name>.html`` and ``runs/<run_id>.html``.

All text from specs is escaped by Jinja2's autoescape; CSS, JavaScript and plots (inline
SVG) are inlined, so there are no external assets.
"""

from __future__ import annotations

from pathlib import Path

from suite.results.store import connect_readonly


def render(database: Path, out: Path, snapshot: dict | None = None, published: set[str] | None = None) -> Path:
    """Render the whole site into ``out`` (built beside it, then swapped in); returns its index.html.
    ``snapshot``: the published snapshot's SNAPSHOT.json (suite.results.snapshot), stated in the header."""
    from suite.report.pages import render_site

    with connect_readonly(database) as con:
        return render_site(con, out, snapshot, published)


__all__ = ["render"]
