"""Rows of the small text tables users hand in (score files, claimed RDP curves)."""

from __future__ import annotations

from typing import Iterator, List, Tuple, Type

__all__ = ["text_rows"]


def text_rows(text: str, where: str, expected: str, columns: int = 2,
              error: Type[Exception] = ValueError) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line number, line, fields)`` of each row of a text table: ``#`` starts a
    comment, commas count as blanks, blank lines are skipped.

    A row with other than ``columns`` fields raises ``error`` with the message
    ``"{where}, line {i}: expected {expected}, got {line!r}"``.
    """
    for i, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != columns:
            raise error(f"{where}, line {i}: expected {expected}, got {line!r}")
        yield i, line, parts
