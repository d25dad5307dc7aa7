"""Outputs as folders of part files (Spark's var output_parts) and CSV doubles as DuckDB writes them."""

from __future__ import annotations

import duckdb

from webdedup.outputs import files, manifest
from webdedup.outputs.numbers import format_double


def spark_writer_folder(path, part_numbers):
    """A folder as Spark's writer leaves it: part files with a task uuid, checksums and _SUCCESS."""
    path.mkdir()
    for number in part_numbers:
        name = f"part-{number:05d}-1b2c-c000.csv"
        (path / name).write_text(f"h\n{number}\n")
        (path / f".{name}.crc").write_text("crc")
    (path / "_SUCCESS").write_text("")
    return path


def test_finalize_parts_names_the_parts_in_partition_order(tmp_path):
    parts = spark_writer_folder(tmp_path / ".parts-x.csv", [2, 0, 100000, 1, 99999])
    target = tmp_path / "x.csv"
    files.finalize_parts(str(parts), str(target))
    assert not parts.exists()
    names = sorted(p.name for p in target.iterdir())
    assert names == [f"part-{i:05d}.csv" for i in range(5)]
    assert [(target / n).read_text().split("\n")[1] for n in names] == ["0", "1", "2", "99999", "100000"]


def test_publishing_replaces_a_folder_and_switches_between_file_and_folder(tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    (output / "x.csv").mkdir()
    (output / "x.csv" / "part-00007.csv").write_text("old")
    (output / "y.csv").write_text("old file")
    staging = output / ".staging-1"
    staging.mkdir()
    (staging / "x.csv").mkdir()
    (staging / "x.csv" / "part-00000.csv").write_text("new")
    (staging / "y.csv").mkdir()
    (staging / "y.csv" / "part-00000.csv").write_text("new folder")
    files.publish_outputs(str(staging), str(output))
    assert [p.name for p in (output / "x.csv").iterdir()] == ["part-00000.csv"]
    assert (output / "y.csv" / "part-00000.csv").read_text() == "new folder"
    assert not staging.exists()


def test_a_folders_sha256_covers_its_parts_names_and_bytes(tmp_path):
    folder = tmp_path / "x.csv"
    folder.mkdir()
    (folder / "part-00000.csv").write_text("a")
    (folder / "part-00001.csv").write_text("b")
    first = manifest.sha256_file(str(folder))
    (folder / "part-00001.csv").write_text("c")
    assert manifest.sha256_file(str(folder)) != first


def test_doubles_are_written_as_duckdbs_csv_writer_writes_them(tmp_path):
    values = [0.7, 1.0, 0.0, 1 / 3, 0.0005, 5e-05, 0.000999000999000999, 93.48, 1e16, 123456.789, None]
    path = tmp_path / "d.csv"
    duckdb.sql("select unnest(?::double[]) as v", params=[values]).write_csv(str(path))
    written = path.read_text().split("\n")[1:-1]
    assert [format_double(v) or "" for v in values] == written
