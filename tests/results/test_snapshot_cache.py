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


def test_a_new_snapshot_replaces_the_older_ones_file_and_leaves_a_live_builds_part(tmp_path):
    """Only the latest key is kept, file by file: an older snapshot's database and counts go, and
    the part a killed build left; the part of a build still running (a live pid) stays, and so does
    the folder, which another render of the same snapshot may be reading from."""
    import json
    import os

    from suite.results.snapshot_cache import published_database
    from tests.snapshot_cut import cut_snapshot

    snapshot, cache = tmp_path / "leaderboard", tmp_path / ".cache" / "published"
    assert cut_snapshot(snapshot, ["gemma3"], lambda run: run["size"] == "tiny-6l")[0] == 6
    first = published_database(snapshot, cache)
    assert first.runs == 6 and first.database.parent == cache
    dead = cache / ".tmp-999999999-old.duckdb"  # no such pid: a build killed part-way
    live = cache / f".tmp-{os.getppid()}-other.duckdb"  # a live process's build in progress
    dead.write_bytes(b"part"), live.write_bytes(b"part")
    info = json.loads((snapshot / "SNAPSHOT.json").read_text())
    (snapshot / "SNAPSHOT.json").write_text(json.dumps({**info, "published_at": "2026-11-28T00:00:00+00:00"}))
    second = published_database(snapshot, cache)
    assert second.database != first.database and second.runs == 6
    assert sorted(p.name for p in cache.iterdir()) == sorted([second.database.name, second.database.stem + ".json",
                                                              live.name])
