"""Numbers as output text, the same on every engine.

DuckDB writes a double in CSV as the shortest text that reads back as the same double, as Python's
``repr`` does (exponent form below 1e-4 and from 1e16: ``5e-05``); the JVM writes ``Double.toString``,
with exponents below 1e-3 (``5.0E-4``).  Spark's CSV exports write doubles through :func:`format_double`,
so both engines write the same bytes.
"""

from __future__ import annotations


def format_double(value: float | None) -> str | None:
    """The shortest round-trip text of a double, as DuckDB's CSV writer gives it; None stays None."""
    return None if value is None else repr(float(value))
