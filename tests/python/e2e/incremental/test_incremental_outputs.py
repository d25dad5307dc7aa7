"""var incremental_outputs: the keyed Parquet outputs are folders of parts, one per build.  After any
sequence of builds (a new batch, changed and removed pages, a new input column, new settings, a
compaction) the current rows of each folder equal the single file a full build writes on the same input;
each later part holds exactly the rows that differ between the two builds' outputs (found by brute force
over their full files); a build that changes nothing adds no part; reruns give identical parts."""

import hashlib
import json
import shutil

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks import generate_corpus
from tests.python.helpers.dbt_runner import run_dbt
from tests.python.helpers.project import project_vars
from webdedup.outputs import parts

KEYED = {entry["file"]: entry["key"] for entry in project_vars()["output_files"].values() if entry.get("key")}


def _build(work, name, folder, extra_vars=None, parts_on=True):
    run_dbt(
        ["build"],
        db_path=work / name / "db.duckdb",
        dbt_vars={
            "documents_path": str(folder),
            "output_dir": str(work / name / "out"),
            "incremental_outputs": parts_on,
        }
        | (extra_vars or {}),
    )
    return work / name / "out"


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _rows(sql):
    """The rows of a query as sorted tuples of (column, value) pairs: compared by column name, since a
    folder of parts read by name puts a column that later parts added after the others."""
    relation = duckdb.sql(sql)
    rows = (
        tuple(sorted(zip(relation.columns, map(_freeze, row), strict=True))) for row in relation.fetchall()
    )
    return sorted(rows, key=repr)


def _full_outputs(work, folder, step, extra_vars=None):
    """A full build with single files on the same input: file -> rows."""
    shutil.rmtree(work / f"full-{step}", ignore_errors=True)
    out = _build(work, f"full-{step}", folder, extra_vars, parts_on=False)
    return {name: _rows(f"select * from '{out / name}'") for name in KEYED}


def _check(out, full, previous_full, new_part):
    """The folders' current rows equal the full build's; the part this build added (new_part, or none)
    holds exactly the rows that differ from the previous full build's (upserts) and the keys that left;
    the manifest's sha256 of each folder is that of its files' names and bytes (the parts it did not hash
    again, webdedup/outputs/parts.py PART_HASHES_FILE, included)."""
    listed = {
        entry["file"]: entry["sha256"] for entry in json.loads((out / "manifest.json").read_text())["outputs"]
    }
    for name, key in KEYED.items():
        files = sorted((out / name).iterdir())
        digest = hashlib.sha256()
        for path in files:
            digest.update(f"{path.name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}".encode())
        assert listed[name] == digest.hexdigest(), name
        assert _rows(parts.current_rows_sql(str(out / name), key)) == full[name], name
        numbers = parts.part_numbers(str(out / name))
        if new_part is None:
            assert numbers == [0], (name, numbers)
            continue
        changed = set(full[name]) - set(previous_full[name])
        keys = parts.key_list(key)

        def key_of(row, keys=keys):
            return tuple(value for column, value in row if column in keys)

        before_keys = {key_of(row) for row in previous_full[name]}
        after_keys = {key_of(row) for row in full[name]}
        if not changed and before_keys == after_keys:
            assert new_part not in numbers, name
            continue
        assert numbers[-1] == new_part, (name, numbers)
        part = f"'{out / name / parts.part_name(new_part)}'"
        change = (
            f"select * exclude ({parts.HASH_COLUMN}, {parts.CHANGE_COLUMN}) from {part} where part_change"
        )
        assert set(_rows(f"{change} = 'upsert'")) == changed, name
        assert {key_of(row) for row in _rows(f"{change} = 'delete'")} == before_keys - after_keys, name


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus.generate(1200, seed=9)


def test_parts_follow_batches_changes_and_settings_and_equal_full_builds(tmp_path, corpus):
    folder = tmp_path / "crawl"
    folder.mkdir()
    pq.write_table(corpus.slice(0, 800), folder / "batch-1.parquet")
    out = _build(tmp_path, "parts", folder)
    full = _full_outputs(tmp_path, folder, 1)
    _check(out, full, None, None)
    first_bytes = {name: (out / name / parts.part_name(0)).read_bytes() for name in KEYED}

    # nothing new: no part is added, and part 0 is the same file
    _build(tmp_path, "parts", folder)
    _check(out, full, full, 1)
    for name in KEYED:
        assert parts.part_numbers(str(out / name)) == [0], name
        assert (out / name / parts.part_name(0)).read_bytes() == first_bytes[name], name

    # a new batch
    pq.write_table(corpus.slice(800, 400), folder / "batch-2.parquet")
    _build(tmp_path, "parts", folder)
    previous, full = full, _full_outputs(tmp_path, folder, 2)
    _check(out, full, previous, 1)

    # a page rewritten, a page copied onto another, two pages removed
    table = pa.concat_tables([pq.read_table(folder / f"batch-{i}.parquet") for i in (1, 2)])
    bodies = table.column("body").to_pylist()
    bodies[3] = "A completely different page about something else entirely, written for this test."
    bodies[10] = bodies[900]
    table = table.set_column(table.schema.get_field_index("body"), "body", pa.array(bodies, pa.string()))
    table = table.take([i for i in range(table.num_rows) if i not in (7, 850)])
    for path in folder.iterdir():
        path.unlink()
    pq.write_table(table, folder / "batch-1.parquet")
    _build(tmp_path, "parts", folder)
    previous, full = full, _full_outputs(tmp_path, folder, 3)
    _check(out, full, previous, 2)

    # a batch with a new lineage column: the release's rows all change (a new column), older parts lack it
    extra = corpus.slice(0, 30).append_column(
        "url", pa.array([f"https://example.org/{i}" for i in range(30)])
    )
    ids = pa.array([f"lineage-{i}" for i in range(30)])
    pq.write_table(extra.set_column(0, "doc_id", ids), folder / "batch-3.parquet")
    _build(tmp_path, "parts", folder)
    previous, full = full, _full_outputs(tmp_path, folder, 4)
    _check(out, full, previous, 3)

    # new settings change every fingerprint: one more part, still the full build's rows
    _build(tmp_path, "parts", folder, {"shingle_size": 4})
    previous, full = full, _full_outputs(tmp_path, folder, 5, {"shingle_size": 4})
    _check(out, full, previous, 4)

    # compaction: part 0 alone; an output with a sort order is the same bytes as a new history on the same
    # input (the release keeps the stored order, where pages an incremental build changed come last)
    _build(tmp_path, "parts", folder, {"shingle_size": 4, "compact_outputs": True})
    _check(out, full, None, None)
    fresh = _build(tmp_path, "fresh", folder, {"shingle_size": 4})
    ordered = {entry["file"] for entry in project_vars()["output_files"].values() if entry.get("order_by")}
    for name in KEYED.keys() & ordered:
        files = [d / name / parts.part_name(0) for d in (out, fresh)]
        assert len({hashlib.sha256(f.read_bytes()).hexdigest() for f in files}) == 1, name
