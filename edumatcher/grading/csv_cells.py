"""CSV cells a spreadsheet shows as text: a cell that would run as a formula gets a leading ``'``.

Text starting with ``=``, ``+``, ``-``, ``@``, tab or CR is what Excel, LibreOffice and Google Sheets
run; a student's name or reason must never run. Numbers are written as numbers.
"""

from __future__ import annotations

from typing import Any

__all__ = ["csv_cell", "csv_text_back"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _num(value: float) -> str:
    """Points without a needless ``.0``: 2.0 -> '2', 1.5 -> '1.5'."""
    return f"{value:g}"


def csv_cell(value: Any) -> str:
    """One CSV cell: numbers as numbers, text defused so a spreadsheet shows it instead of running it.

    >>> csv_cell(2.0), csv_cell('=HYPERLINK("x")'), csv_cell("ann")
    ('2', '\\'=HYPERLINK("x")', 'ann')
    """
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return _num(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_text_back(cell: str) -> str:
    """The text a ``csv_cell`` cell stood for (what an instructor's edited CSV means).

    >>> csv_text_back(csv_cell("=1+1")), csv_text_back("'quoted")
    ('=1+1', "'quoted")
    """
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_STARTS) else cell
