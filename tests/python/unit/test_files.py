"""webdedup/outputs/files.py: the published copy of the database is byte for byte its source, whichever way
it is written (direct I/O past the page cache, or through it where the file system has no direct I/O)."""

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
