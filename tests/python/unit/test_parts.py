"""webdedup/outputs/parts.py: folders of parts, one per build (var incremental_outputs).

current_rows_sql against a brute-force replay of random histories; stage_parts' numbering, hard links and
new histories; drop_empty_part; the manifest's memo of part hashes; the SQL docs/operations.md shows is
the function's."""

import hashlib
import json
import os
import random
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from webdedup.outputs import files, manifest, parts

ROOT = Path(__file__).resolve().parents[3]


def _write_part(folder, number, rows, deletes):
    """A part as a build writes it: rows {(a, b): value} as upserts, deleted keys with null values."""
    keys = list(rows) + list(deletes)
    table = pa.table(
        {
            "a": [k[0] for k in keys],
            "b": [k[1] for k in keys],
            "value": [rows[k] for k in rows] + [None] * len(deletes),
            parts.CHANGE_COLUMN: ["upsert"] * len(rows) + ["delete"] * len(deletes),
            parts.HASH_COLUMN: pa.array(
                [hash(rows[k]) % 2**63 for k in rows] + [None] * len(deletes), pa.uint64()
            ),
        }
    )
    pq.write_table(table, os.path.join(folder, parts.part_name(number)))


@pytest.mark.parametrize("seed", range(8))
def test_current_rows_replay_every_build(tmp_path, seed):
    rng = random.Random(seed)
    state = {}
    for number in range(rng.randint(1, 6)):
        new = dict(state) if number else {}
        for _ in range(rng.randint(0, 12)):
            key = (rng.choice("xyz"), rng.randint(0, 4))
            if key in new and rng.random() < 0.4:
                del new[key]
            else:
                new[key] = f"v{rng.randint(0, 3)}"
        changed = {k: v for k, v in new.items() if state.get(k) != v} if number else new
        deleted = [k for k in state if k not in new] if number else []
        _write_part(tmp_path, number, changed, deleted)
        state = new
        found = duckdb.sql(parts.current_rows_sql(str(tmp_path), "a, b")).fetchall()
        assert sorted(found) == sorted((a, b, v) for (a, b), v in state.items())


def _number(published, staged, key, compact):
    return json.loads(parts.stage_parts(str(published), str(staged), key, compact))["number"]


def test_stage_parts_links_the_published_parts_and_numbers_the_next(tmp_path):
    published, staged = tmp_path / "out" / "x.parquet", tmp_path / "staging" / "x.parquet"
    published.mkdir(parents=True)
    assert _number(published, staged, "a, b", False) == 0  # no part yet
    for number in (0, 1, 3):
        _write_part(published, number, {("x", number): "v"}, [])
    staged_part = json.loads(parts.stage_parts(str(published), str(tmp_path / "s2"), "a, b", False))
    assert staged_part["number"] == 4
    assert staged_part["path"] == str(tmp_path / "s2" / parts.part_name(4))
    newest = duckdb.sql(staged_part["published"]).fetchall()  # part 3 is the newest of each key
    assert sorted(newest) == [("x", n, "upsert", hash("v") % 2**63) for n in (0, 1, 3)]
    assert parts.part_numbers(str(tmp_path / "s2")) == [0, 1, 3]
    for number in (0, 1, 3):
        name = parts.part_name(number)
        assert os.path.samefile(published / name, tmp_path / "s2" / name)  # a link, not a copy
    assert _number(published, tmp_path / "s3", "a, b", True) == 0  # compact
    assert parts.part_numbers(str(tmp_path / "s3")) == []
    # a key the parts lack, or parts without the change columns (Spark's folders), start a new history
    assert _number(published, tmp_path / "s4", "doc_id", False) == 0
    spark = tmp_path / "spark.parquet"
    spark.mkdir()
    pq.write_table(pa.table({"a": ["x"], "b": [1]}), spark / parts.part_name(0))
    assert _number(spark, tmp_path / "s5", "a, b", False) == 0


def test_an_empty_part_is_dropped(tmp_path):
    _write_part(tmp_path, 0, {}, [])
    _write_part(tmp_path, 1, {("x", 1): "v"}, [])
    assert parts.drop_empty_part(str(tmp_path / parts.part_name(0))) == "no change"
    assert parts.drop_empty_part(str(tmp_path / parts.part_name(1))).endswith(parts.part_name(1))
    assert parts.part_numbers(str(tmp_path)) == [1]


def test_the_docs_show_the_functions_sql():
    text = (ROOT / "docs" / "operations.md").read_text()
    (shown,) = re.findall(r"```sql\n(create view current_release as\n.*?)```", text, re.S)
    sql = parts.current_rows_sql("output/deduped_documents.parquet", "doc_id")
    assert " ".join(shown.split()) == f"create view current_release as {sql};"


def test_the_manifest_hashes_only_the_parts_a_build_wrote(tmp_path, monkeypatch):
    output, staging = tmp_path / "out", tmp_path / "staging"
    published, staged = output / "x.parquet", staging / "x.parquet"
    published.mkdir(parents=True)
    for number in (0, 1):
        _write_part(published, number, {("x", number): "v"}, [])

    def brute_force(folder):  # the folder's sha256 as defined: names and bytes of its files
        files = sorted(folder.iterdir())
        return manifest.named_digest((p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files)

    def manifest_sha256(folder_name="x.parquet"):  # build_manifest's: from staging, the memo published
        known, stamps = parts.read_part_hashes(str(output)), {}
        found = manifest._staged_sha256(str(staging / folder_name), known, stamps)
        parts.write_part_hashes(str(staging), stamps)
        return found

    staging.mkdir()
    (staging / "x.parquet").symlink_to(published)  # the first build: its own parts
    assert manifest_sha256() == brute_force(published)
    (staging / "x.parquet").unlink()
    files.publish_outputs(str(staging), str(output))  # the memo is published beside the folder
    assert (output / parts.PART_HASHES_FILE).is_file() and not (published / parts.PART_HASHES_FILE).exists()

    staging.mkdir()
    parts.stage_parts(str(published), str(staged), "a, b", False)
    _write_part(staged, 2, {("x", 2): "w"}, [])
    read = []

    def counted(path):
        read.append(os.path.basename(path))
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    monkeypatch.setattr(manifest, "sha256_file", counted)
    assert manifest_sha256() == brute_force(staged)
    assert read == [parts.part_name(2)]  # the linked parts' hashes came from the memo
    # a part replaced under its name (a new file), or written again in place (a later time): hashed again
    (staged / parts.part_name(0)).unlink()
    _write_part(staged, 0, {("x", 0): "u"}, [])
    part_one = staged / parts.part_name(1)
    written = part_one.stat().st_mtime_ns
    part_one.write_bytes(part_one.read_bytes().replace(b"x", b"y"))
    os.utime(part_one, ns=(written, written + 10**9))  # a later time even on a coarse clock
    read.clear()
    assert manifest_sha256() == brute_force(staged)
    # (part 2 too: the published memo does not know it yet)
    assert sorted(read) == [parts.part_name(0), parts.part_name(1), parts.part_name(2)]
    # a memo that is not JSON is ignored; a folder without part_change (Spark's) keeps none
    (output / parts.PART_HASHES_FILE).write_text("{")
    assert manifest_sha256() == brute_force(staged)
    spark = staging / "spark.parquet"
    spark.mkdir()
    pq.write_table(pa.table({"a": ["x"]}), spark / parts.part_name(0))
    stamps = {}
    assert manifest._staged_sha256(str(spark), {}, stamps) == brute_force(spark) and stamps == {}
