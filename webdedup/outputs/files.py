"""File operations the SQL layer cannot express (DuckDB and Spark SQL have no mkdir or rename).

Called from the export and publish macros through the ``webdedup_*`` SQL functions registered from
webdedup/engines/udfs.py.  Outputs are written to a hidden staging folder and moved into place only when
the whole run succeeded, so an output folder only ever holds complete runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import mmap
import os
import shutil

#: The staging folder of a run inside the output folder: ``<output_dir>/.staging-<invocation id>``.
STAGING_PREFIX = ".staging-"
#: Published last, so a complete manifest means a complete set of outputs.
MANIFEST_FILE = "manifest.json"
#: Bytes per read and write of copy_file; a multiple of DIRECT_ALIGN.
COPY_CHUNK_BYTES = 8 << 20
#: Direct I/O writes whole blocks at block offsets: 4096 covers 512- and 4096-byte devices.
DIRECT_ALIGN = 4096


def prepare_dir(path: str) -> str:
    """Create the folder if needed; return its absolute path."""
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def staging_dir(output_dir: str, invocation_id: str) -> str:
    """This run's staging folder (not created)."""
    return os.path.join(output_dir, STAGING_PREFIX + invocation_id)


def path_kind(path: str) -> str:
    """How a published output exists: 'file', 'folder' (Spark's folders of part files) or '' (missing)."""
    return "folder" if os.path.isdir(path) else "file" if os.path.isfile(path) else ""


def write_text(path: str, text: str) -> str:
    """Write a text file (UTF-8, newlines as given); return its absolute path."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return os.path.abspath(path)


def publish_file(path: str, target_dir: str, place=None) -> str:
    """Put path into target_dir under a temporary name with ``place(source, temporary)`` (default
    copy_file; link_or_copy shares the file), then rename it into place; returns the target."""
    source = os.path.abspath(path)
    target = os.path.join(os.path.abspath(target_dir), os.path.basename(source))
    if target == source:
        return f"{target} (already in place)"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temporary = f"{target}.{os.getpid()}.tmp"
    _remove(temporary)  # an interrupted run's (a hard link cannot replace it)
    try:
        (place or copy_file)(source, temporary)
    except BaseException:  # a full disk, an interrupt: the previous file stays, no half copy beside it
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    os.replace(temporary, target)
    return target


def link_or_copy(source: str, target: str) -> str:
    """Hard-link ``source`` as the new file ``target`` (no byte copied); where the file system cannot
    (another file system, none with hard links) copy it with copy_file.  Returns 'link' or copy_file's
    answer."""
    try:
        os.link(source, target)
    except OSError:
        return copy_file(source, target)
    return "link"


def copy_file(source: str, target: str) -> str:
    """Copy ``source`` to a new file ``target``; return how ('direct' or 'buffered').

    Where the OS and the file system have direct I/O (Linux's O_DIRECT), the copy is written past the page
    cache and then synced: the file copied is one the build has just written (still cached), and a second,
    cached copy of it costs as many freshly allocated cache pages, mostly kernel time.  On the 2-core VM of
    docs/benchmarks.md, 1.8 GB took 8.8 s through the cache and 0.7 s direct.  Elsewhere (no O_DIRECT, a
    file system that refuses it at open, as tmpfs before Linux 6.6, or at the first write) it is
    ``shutil.copyfile``."""
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | direct, 0o666)
        except OSError:
            out = None
        if out is not None:
            try:
                if _copy_direct(source, out, direct):
                    return "direct"
            finally:
                os.close(out)
    shutil.copyfile(source, target)
    return "buffered"


def _copy_direct(source: str, out: int, direct: int) -> bool:
    """Copy ``source`` into ``out`` (opened with O_DIRECT) and sync it; False when the file system
    refused the first direct write (nothing written)."""
    buffer = mmap.mmap(-1, COPY_CHUNK_BYTES)  # page-aligned, as direct writes need
    view = memoryview(buffer)
    try:
        with open(source, "rb", buffering=0) as handle:
            first = True
            while count := handle.readinto(buffer):
                if count % DIRECT_ALIGN:  # the file's tail: the rest through the cache
                    _clear_flag(out, direct)
                try:
                    _write_all(out, view[:count], direct)
                except OSError:
                    if first:
                        return False
                    raise
                first = False
        os.fsync(out)
        return True
    finally:
        view.release()
        with contextlib.suppress(BufferError):  # a traceback still holding a slice: freed with it
            buffer.close()


def _write_all(out: int, data: memoryview, direct: int) -> None:
    while data:
        data = data[os.write(out, data) :]
        if data:  # a short write: the rest starts mid-block, so it goes through the cache
            _clear_flag(out, direct)


def _clear_flag(out: int, flag: int) -> None:
    fcntl.fcntl(out, fcntl.F_SETFL, fcntl.fcntl(out, fcntl.F_GETFL) & ~flag)


#: Beside the build file after a publish that shared it with the published database (a hard link):
#: "<inode> <size> <mtime in ns>" of the shared file, so the next build knows it is still the one it built.
SHARED_RECORD_SUFFIX = ".published"


def _identity(path: str) -> str:
    status = os.stat(path)
    return f"{status.st_ino} {status.st_size} {status.st_mtime_ns}"


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def publish_database(build_path: str, publish_dir: str) -> str:
    """Publish the checkpointed build database, which this process no longer writes (the publish hook
    attaches it read-only first), into publish_dir: a hard link renamed into place where the file system
    has one (no byte copied, no second file on disk), else a copy renamed into place.  Readers never see
    half a file.  A shared file is recorded beside the build file; own_build_file gives the next build
    its own copy before it writes."""
    source = os.path.abspath(build_path)
    record = source + SHARED_RECORD_SUFFIX
    _remove(record)
    target = publish_file(source, publish_dir, place=link_or_copy)
    if target.endswith("(already in place)"):
        return target.replace("(already in place)", "(built in place)")
    if not os.path.samefile(source, target):
        return f"{target} (a copy)"
    write_text(record, _identity(source) + "\n")
    return f"{target} (a hard link to the build file)"


def own_build_file(build_path: str) -> str:
    """Before a build attaches its file: when the last publish shared it with the published database,
    copy it to a file of the build's own (renamed into place), so nothing the build writes reaches the
    analysts' file.  When the shared file changed after that publish (a connection wrote to the published
    database), it is no longer the state the build left: the build starts from a new, empty file (dbt
    then builds every model in full).  Returns what was done, '' when nothing was needed."""
    source = os.path.abspath(build_path)
    record = source + SHARED_RECORD_SUFFIX
    try:
        links = os.stat(source).st_nlink
    except FileNotFoundError:
        _remove(record)
        return ""
    if links < 2:
        _remove(record)
        return ""
    recorded = ""
    with contextlib.suppress(FileNotFoundError), open(record, encoding="utf-8") as handle:
        recorded = handle.read().strip()

    def changed() -> bool:  # a shared file without a record (linked by someone else) is copied as is
        return bool(recorded) and recorded != _identity(source)

    temporary = f"{source}.{os.getpid()}.tmp"
    try:
        if not changed():
            copy_file(source, temporary)
    except BaseException:
        _remove(temporary)
        raise
    if changed():  # before or while copying
        _remove(temporary)
        os.remove(source)  # the published name keeps the file
        _remove(record)
        return (
            f"{source} was shared with the published database, which was written to after publishing: "
            "starting from a new build file (a full build)"
        )
    os.replace(temporary, source)
    _remove(record)
    return f"{source} was shared with the published database: the build writes its own copy"


def publish_outputs(staging: str, output_dir: str) -> str:
    """Move a successful run's staged files into output_dir (manifest last); drop staging folders."""
    if not os.path.isdir(staging):
        return "nothing staged"
    names = sorted(os.listdir(staging), key=lambda name: (name == MANIFEST_FILE, name))
    for name in names:
        target = os.path.join(output_dir, name)
        if os.path.isdir(target) and not os.path.islink(target):
            # a folder of part files (output_parts, incremental_outputs): renamed aside, then dropped, so
            # readers miss it only between two renames
            aside = os.path.join(staging, f".replaced-{name}")
            os.replace(target, aside)
            os.replace(os.path.join(staging, name), target)
            continue
        if os.path.isdir(os.path.join(staging, name)) and os.path.lexists(target):
            os.remove(target)
        os.replace(os.path.join(staging, name), target)
    shutil.rmtree(staging, ignore_errors=True)
    for leftover in glob.glob(os.path.join(output_dir, STAGING_PREFIX + "*")):
        shutil.rmtree(leftover, ignore_errors=True)
    return f"published {len(names)} file(s) to {os.path.abspath(output_dir)}"


def discard_dir(path: str) -> str:
    """Drop the staging folder of a run that failed."""
    shutil.rmtree(path, ignore_errors=True)
    return f"discarded {path}"


def finalize_export(parts_dir: str, target: str) -> str:
    """Turn a Spark writer's output folder (one part file) into the single file ``target``."""
    parts = sorted(
        p
        for p in glob.glob(os.path.join(parts_dir, "part-*"))
        if not p.endswith(".crc") and os.path.getsize(p) > 0
    ) or sorted(p for p in glob.glob(os.path.join(parts_dir, "part-*")) if not p.endswith(".crc"))
    if len(parts) != 1:
        raise RuntimeError(f"finalize_export: expected one part file in {parts_dir}, found {len(parts)}")
    os.replace(parts[0], target)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return os.path.abspath(target)


def _part_number(path: str) -> int:
    return int(os.path.basename(path).split("-")[1].split(".")[0])


def finalize_parts(parts_dir: str, target: str) -> str:
    """Turn a Spark writer's output folder into the folder ``target`` of its part files, renamed
    ``part-00000.<ext>``, ``part-00001.<ext>``, ... in partition order (the order of the rows, as the
    writer got them range-partitioned and sorted): the same names on every run."""
    extension = os.path.splitext(target)[1]
    parts = sorted(
        (p for p in glob.glob(os.path.join(parts_dir, "part-*")) if not p.endswith(".crc")), key=_part_number
    )
    if not parts:
        raise RuntimeError(f"finalize_parts: no part file in {parts_dir}")
    os.makedirs(target)
    for number, part in enumerate(parts):
        os.replace(part, os.path.join(target, f"part-{number:05d}{extension}"))
    shutil.rmtree(parts_dir, ignore_errors=True)
    return os.path.abspath(target)
