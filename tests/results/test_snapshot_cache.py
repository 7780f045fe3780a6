"""The published snapshot's cached database is keyed by content: any changed byte or name of the
snapshot gives another key; the same files elsewhere give the same key (suite.results.snapshot_cache)."""

from __future__ import annotations

import shutil

from suite.results.snapshot_cache import content_key


def test_the_key_follows_the_snapshots_content_not_its_place(tmp_path):
    one = tmp_path / "one"
    (one / "samples").mkdir(parents=True)
    (one / "SNAPSHOT.json").write_text('{"training_runs": 2}')
    (one / "samples" / "a.jsonl.gz").write_bytes(b"\x1f\x8b rows")
    key = content_key(one)
    shutil.copytree(one, tmp_path / "two")
    assert content_key(tmp_path / "two") == key  # the same files elsewhere: the same database
    (one / "samples" / "a.jsonl.gz").write_bytes(b"\x1f\x8b rowS")
    changed = content_key(one)
    assert changed != key
    (one / "samples" / "a.jsonl.gz").rename(one / "samples" / "b.jsonl.gz")
    assert content_key(one) not in (key, changed)  # a renamed file is another snapshot
