"""webdedup/outputs/files.py: the published database is the build file (a hard link) or, where the file
system has no hard links, a copy byte for byte the same, whichever way it is written (direct I/O past the
page cache, or through it where the file system has no direct I/O); the next build writes a file of its
own."""

from __future__ import annotations

import errno
import os

import pytest

from webdedup.outputs import files

SIZES = [0, 1, files.DIRECT_ALIGN - 1, files.DIRECT_ALIGN, 5 * files.DIRECT_ALIGN + 7, 64 * 1024]


def source_file(tmp_path, size: int):
    path = tmp_path / f"source-{size}.duckdb"
    path.write_bytes(os.urandom(size))
    return path


def supports_direct_io(folder) -> bool:
    probe = folder / "probe"
    try:
        out = os.open(probe, os.O_WRONLY | os.O_CREAT | getattr(os, "O_DIRECT", 0), 0o644)
    except OSError:
        return False
    os.close(out)
    probe.unlink()
    return hasattr(os, "O_DIRECT")


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 4 blocks, so the sizes above span several chunks and end mid-block."""
    monkeypatch.setattr(files, "COPY_CHUNK_BYTES", 4 * files.DIRECT_ALIGN)


@pytest.mark.parametrize("size", SIZES)
def test_copies_are_byte_identical_on_the_direct_path(tmp_path, small_chunks, size):
    if not supports_direct_io(tmp_path):
        pytest.skip("no direct I/O on this file system")
    source = source_file(tmp_path, size)
    assert files.copy_file(str(source), str(tmp_path / "copy")) == "direct"
    assert (tmp_path / "copy").read_bytes() == source.read_bytes()


@pytest.mark.parametrize("size", [0, 5 * files.DIRECT_ALIGN + 7])
def test_without_direct_io_the_copy_goes_through_the_cache(tmp_path, monkeypatch, size):
    monkeypatch.delattr(os, "O_DIRECT", raising=False)
    source = source_file(tmp_path, size)
    assert files.copy_file(str(source), str(tmp_path / "copy")) == "buffered"
    assert (tmp_path / "copy").read_bytes() == source.read_bytes()


def test_a_file_system_refusing_direct_writes_gets_a_buffered_copy(tmp_path, small_chunks, monkeypatch):
    """Some file systems accept O_DIRECT at open and refuse the write (EINVAL): the copy starts over."""
    if not hasattr(os, "O_DIRECT"):
        pytest.skip("no O_DIRECT here")
    real_write = os.write
    refused = []

    def refusing_write(fd, data):
        if not refused:
            refused.append(fd)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", refusing_write)
    source = source_file(tmp_path, 9 * files.DIRECT_ALIGN + 3)
    target = tmp_path / "copy"
    target.write_bytes(b"an older file")
    assert files.copy_file(str(source), str(target)) == "buffered"
    assert refused and target.read_bytes() == source.read_bytes()


def test_publish_file_replaces_the_published_copy_and_leaves_no_temporary(tmp_path, small_chunks):
    source = source_file(tmp_path, 7 * files.DIRECT_ALIGN + 11)
    published = tmp_path / "published"
    published.mkdir()
    (published / source.name).write_bytes(b"the previous build")
    target = files.publish_file(str(source), str(published))
    assert target == str(published / source.name)
    assert (published / source.name).read_bytes() == source.read_bytes()
    assert sorted(os.listdir(published)) == [source.name]


def test_a_short_direct_write_finishes_the_copy_through_the_cache(tmp_path, small_chunks, monkeypatch):
    if not supports_direct_io(tmp_path):
        pytest.skip("no direct I/O on this file system")
    real_write = os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        if len(calls) == 2:  # the second chunk: only its first block
            return real_write(fd, data[: files.DIRECT_ALIGN])
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", short_write)
    source = source_file(tmp_path, 13 * files.DIRECT_ALIGN + 5)
    assert files.copy_file(str(source), str(tmp_path / "copy")) == "direct"
    assert (tmp_path / "copy").read_bytes() == source.read_bytes()
    assert len(calls) > 4


def test_a_copy_that_fails_midway_keeps_the_published_file_and_leaves_no_temporary(
    tmp_path, small_chunks, monkeypatch
):
    real_write = os.write
    calls = []

    def full_disk(fd, data):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    monkeypatch.setattr(files.shutil, "copyfile", lambda *args: pytest.fail("no second copy after a failure"))
    source = source_file(tmp_path, 20 * files.DIRECT_ALIGN)
    published = tmp_path / "published"
    published.mkdir()
    (published / source.name).write_bytes(b"the previous build")
    if not supports_direct_io(published):
        pytest.skip("no direct I/O on this file system")
    with pytest.raises(OSError, match="No space left"):
        files.publish_file(str(source), str(published))
    assert sorted(os.listdir(published)) == [source.name]
    assert (published / source.name).read_bytes() == b"the previous build"


def test_publish_database_links_the_build_file_and_records_it(tmp_path):
    build = source_file(tmp_path, 3 * files.DIRECT_ALIGN)
    published = tmp_path / "published"
    assert files.publish_database(str(build), str(published)).endswith("(a hard link to the build file)")
    assert os.path.samefile(build, published / build.name)
    assert sorted(os.listdir(published)) == [build.name]
    status = build.stat()
    record = tmp_path / (build.name + files.SHARED_RECORD_SUFFIX)
    assert record.read_text().split() == [str(status.st_ino), str(status.st_size), str(status.st_mtime_ns)]


def test_without_hard_links_the_published_database_is_a_copy(tmp_path, monkeypatch):
    def no_links(*args):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    build = source_file(tmp_path, 3 * files.DIRECT_ALIGN + 1)
    published = tmp_path / "published"
    assert files.publish_database(str(build), str(published)).endswith("(a copy)")
    assert not os.path.samefile(build, published / build.name)
    assert (published / build.name).read_bytes() == build.read_bytes()
    assert not (tmp_path / (build.name + files.SHARED_RECORD_SUFFIX)).exists()
    assert files.own_build_file(str(build)) == ""  # nothing shared: the build writes its file in place


def test_the_next_build_writes_its_own_copy_and_the_published_file_keeps_its_bytes(tmp_path):
    build = source_file(tmp_path, 5 * files.DIRECT_ALIGN + 3)
    published = tmp_path / "published"
    files.publish_database(str(build), str(published))
    before = build.read_bytes()
    assert "writes its own copy" in files.own_build_file(str(build))
    assert not os.path.samefile(build, published / build.name)
    assert build.read_bytes() == before == (published / build.name).read_bytes()
    with open(build, "r+b") as handle:  # what the build writes now
        handle.write(b"new")
    assert (published / build.name).read_bytes() == before
    assert not (tmp_path / (build.name + files.SHARED_RECORD_SUFFIX)).exists()
    assert sorted(os.listdir(tmp_path)) == sorted([build.name, "published"])
    assert files.own_build_file(str(build)) == ""  # once is enough


def test_a_published_file_written_to_after_publishing_starts_a_new_build_file(tmp_path):
    build = source_file(tmp_path, 2 * files.DIRECT_ALIGN)
    published = tmp_path / "published"
    files.publish_database(str(build), str(published))
    with open(published / build.name, "ab") as handle:  # an analyst's read-write connection
        handle.write(b"an analyst's table")
    assert "a full build" in files.own_build_file(str(build))
    assert not build.exists()  # dbt then builds every model into a new file
    assert (published / build.name).read_bytes().endswith(b"an analyst's table")
    assert not (tmp_path / (build.name + files.SHARED_RECORD_SUFFIX)).exists()


def test_a_hard_link_made_by_someone_else_is_copied_too(tmp_path):
    build = source_file(tmp_path, files.DIRECT_ALIGN + 9)
    os.link(build, tmp_path / "backup.duckdb")
    assert "writes its own copy" in files.own_build_file(str(build))
    assert not os.path.samefile(build, tmp_path / "backup.duckdb")
    assert build.read_bytes() == (tmp_path / "backup.duckdb").read_bytes()
