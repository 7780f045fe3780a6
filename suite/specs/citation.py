"""An encoding's ``paper:`` is a citation: who, when and what, as every shipped spec writes it.

The board links a row to its source by this text (an arXiv search of its title), and a reader
judges the row by it; a placeholder ("TODO", "TBD", "paper") left from the scaffold
(``posbench new-encoding``) would be published as if it were one. The form is
``<authors> <year>, <title>`` and anything after, e.g. ``Su et al. 2021, RoFormer: Enhanced
Transformer with Rotary Position Embedding (Eq. 34)``: the authors are one or more words (a
team or a handle counts: ``Gemma Team 2025``, ``bloc97 2023``), the year four digits, the title
at least two words or one of four letters. `posbench validate` checks it (suite.cli.validate);
loading a spec does not, so a work in progress trains before its citation is written.
"""

from __future__ import annotations

import re

from suite.core.yamldoc import SpecError, YamlDoc

FORM = "'<authors> <year>, <title>', e.g. 'Su et al. 2021, RoFormer: Enhanced Transformer with Rotary Position Embedding'"
CITATION = re.compile(r"(?P<authors>\S.*?) (?P<year>(?:19|20)\d\d), (?P<title>\S.*)")
PLACEHOLDER = re.compile(r"\b(?:todo|tbd|tba|fixme|xxx|placeholder|lorem ipsum)\b|\?\?|\.\.\.", re.IGNORECASE)
NON_TITLES = {"paper", "a paper", "the paper", "title", "unknown", "none", "n/a", "na"}


def citation_problem(paper) -> str | None:
    """What keeps ``paper`` from being a citation, or None."""
    if not isinstance(paper, str) or not paper.strip():
        return f"empty: cite the paper as {FORM}"
    text = " ".join(paper.split())
    if (placeholder := PLACEHOLDER.search(text)) is not None:
        return f"'{placeholder[0]}' is a placeholder, not a citation: cite the paper as {FORM}"
    match = CITATION.match(text)
    if match is None:
        return f"'{text}' is not a citation: cite the paper as {FORM}"
    title = match["title"].strip()
    words = re.findall(r"\w+", title)
    if title.lower().rstrip(".") in NON_TITLES or not (len(words) >= 2 or (words and len(words[0]) >= 4)):
        return f"'{title}' is not a title: cite the paper as {FORM}"
    return None


def check_paper(doc: YamlDoc) -> list[SpecError]:
    """The ``paper`` of an encoding spec's document, as a file:line error when it is not a citation."""
    data = doc.data if isinstance(doc.data, dict) else {}
    if "paper" not in data:
        return []  # a required key: the spec's own validation reports it missing
    problem = citation_problem(data["paper"])
    return [doc.error(("paper",), problem)] if problem else []
