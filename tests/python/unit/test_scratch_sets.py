"""The scratch file of shingle sets (webdedup/engines/scratch_sets.py); what is counted over it is checked
against the spec in test_anchor_scoring.py."""

from webdedup.engines import scratch_sets


def test_gathered_writes_keep_every_byte_in_order_through_short_writes(tmp_path, monkeypatch):
    """The scratch file is written with os.writev; a write that stops short (mid-piece or between pieces)
    goes on from the first byte not written."""
    pieces = [memoryview(bytes([n]) * n) for n in range(1, 40)]
    real_writev = scratch_sets.os.writev

    def short_writev(fd, buffers):
        head = b"".join(bytes(buffer) for buffer in buffers)[:7]
        return real_writev(fd, [head])

    monkeypatch.setattr(scratch_sets, "IOV_MAX", 5)
    monkeypatch.setattr(scratch_sets.os, "writev", short_writev)
    path = tmp_path / "scratch"
    with open(path, "wb", buffering=0) as sink:
        scratch_sets.write_pieces(sink.fileno(), list(pieces))
    assert path.read_bytes() == b"".join(bytes(piece) for piece in pieces)
