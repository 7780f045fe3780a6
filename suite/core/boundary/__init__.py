"""The boundary every value from outside crosses before it is used.

A spec, a snapshot, a record, a submission bundle or a profile file may come from anyone (a
pull request), so what they hold reaches a shell script, a file path, an import, a terminal or
a page only through this package, which says what each may be:

* :mod:`.names`: what a name may be where it becomes a file name, a page name or a shell word
  (an allow-list of characters and a length);
* :mod:`.text`: what free text (a display name, a description) may hold, and how any text is
  made safe for a terminal (control characters and bidirectional overrides shown, never sent);
* :mod:`.shell`: the quoting of every word a generated script holds, and the allow-list of
  the sbatch options a profile may add;
* :mod:`.paths`: a path inside the project, reached through no link;
* :mod:`.bounded`: the one streaming reader of JSON and gzip JSON lines, bounded in bytes,
  line length, records, nesting and string length before anything is parsed or kept;
* :mod:`.atomic`: writing a file aside and renaming it into place.

Each refusal is one line naming the file or field and what is wrong (``ValueError`` or the
caller's own error type), never a traceback.
"""
