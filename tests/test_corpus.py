"""The determinism corpus: hand-checked scenarios replayed byte for byte through both books.

Each ``tests/corpus/*.jsonl`` file is a transcript, one canonical JSON object per line
(``orjson``, sorted keys):

* line 1, ``{"scenario", "about", "symbol", "last_price"}``: what it shows and the book it starts from
  (plus ``"budget"`` and ``"protection"`` when the book is built with those settings);
* ``{"in": op}``: an operation, as in ``edumatcher.differential`` (submit, cancel, cancel_owner, maintain);
* after each input, its outputs: ``{"out": "rejected", "code"}`` for a refused order, else
  ``{"out": "returned", "value"}`` for a cancel, then one line per event in order
  (``{"out": "trade", "trade"}``, ``{"out": "cancelled" | "triggered", "order"}``; an event's
  order is shown as it stands when the call returns), then for an accepted order
  ``{"submitted": order}`` (its fields when the call returns), then ``{"book": {...}}``:
  depth, ``last_price``, ``len`` and, per live order (in order of first appearance of its
  id), ``[id, status, filled_qty, remaining_qty, visible_qty, arrival_seq]``.

Replaying the inputs must reproduce the whole file, byte for byte, with ``OrderBook`` and
with ``NaiveBook``. Expected outputs were generated with ``NaiveBook`` and then checked by
hand against ``rules.py`` before being committed. To add or change a scenario, write its
header and ``in`` lines, then run::

    .venv/bin/python tests/test_corpus.py --regen [NAME ...]

and read every generated line against the spec before committing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from edumatcher.book import OrderBook
from edumatcher.model import Order, OrderRejected
from edumatcher.reference import NaiveBook

CORPUS = Path(__file__).resolve().parent / "corpus"
SCENARIOS = sorted(CORPUS.glob("*.jsonl"))
BOOKS: dict[str, Callable[[str, int | None], Any]] = {"OrderBook": OrderBook, "NaiveBook": NaiveBook}


def canonical(obj: Any) -> bytes:
    """One transcript line: orjson with sorted keys, newline-terminated."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) + b"\n"


def inputs_of(text: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the operations of a transcript (outputs are ignored)."""
    lines = [orjson.loads(line) for line in text.splitlines() if line.strip()]
    return lines[0], [line["in"] for line in lines[1:] if "in" in line]


def transcript(make_book: Callable[[str, int | None], Any], header: dict[str, Any], ops: list[dict[str, Any]]) -> bytes:
    """Replay ``ops`` on a fresh book and write the full transcript, header first."""
    settings = {k: header[k] for k in ("budget", "protection") if k in header}
    book = make_book(header["symbol"], header["last_price"], **settings)
    out = [canonical(header)]
    ids: list[Any] = []  # every id seen, in order of first appearance, to list the live orders
    for op in ops:
        out.append(canonical({"in": op}))
        if op["op"] == "submit":
            oid = op["order"].get("id")
            if isinstance(oid, str) and oid not in ids:
                ids.append(oid)
            try:
                order = Order.from_dict(op["order"])
                book.submit(order, now_ns=op["now_ns"])
            except OrderRejected as exc:
                out.append(canonical({"out": "rejected", "code": exc.code.value}))
            else:
                out += _events(book)
                out.append(canonical({"submitted": order.to_dict()}))
        else:
            now_ns = op.get("now_ns", 0)
            if op["op"] == "cancel":
                value = book.cancel(op["id"], now_ns=now_ns)
            elif op["op"] == "cancel_owner":
                value = book.cancel_owner(op["owner"], now_ns=now_ns)
            else:
                value = book.maintain(now_ns=now_ns)
            out.append(canonical({"out": "returned", "value": value}))
            out += _events(book)
        out.append(canonical({"book": _book_state(book, ids)}))
    return b"".join(out)


def _book_state(book: Any, ids: list[str]) -> dict[str, Any]:
    """Depth, last price, size, and one ``[id, status, filled, remaining, visible, arrival_seq]`` per live order."""
    bids, asks = book.depth()
    live = [book.get(oid) for oid in ids]
    return {
        "bids": [list(level) for level in bids],
        "asks": [list(level) for level in asks],
        "last_price": book.last_price,
        "len": len(book),
        "live": [[o.id, o.status.value, o.filled_qty, o.remaining_qty, o.visible_qty, o.arrival_seq]
                 for o in live if o is not None],
    }


def _events(book: Any) -> list[bytes]:
    return [canonical({"out": kind, ("trade" if kind == "trade" else "order"): payload.to_dict()})
            for kind, payload in book.events]


def test_corpus_is_present() -> None:
    assert len(SCENARIOS) >= 12, f"expected the scenario files in {CORPUS}"


@pytest.mark.parametrize("book_name", sorted(BOOKS))
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_replay_reproduces_the_file_byte_for_byte(path: Path, book_name: str) -> None:
    expected = path.read_bytes()
    header, ops = inputs_of(expected)
    produced = transcript(BOOKS[book_name], header, ops)
    if produced != expected:
        want, got = expected.splitlines(), produced.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
        pytest.fail(
            f"{book_name} on {path.name}: first difference at line {first + 1}\n"
            f"expected: {want[first] if first < len(want) else '<end of file>'!r}\n"
            f"produced: {got[first] if first < len(got) else '<end of output>'!r}"
        )


def test_replay_does_not_depend_on_hash_randomisation() -> None:
    """Another interpreter with another PYTHONHASHSEED writes the same bytes (sets and dicts
    of strings iterate in a hash-dependent order; no output may depend on it)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_corpus as t\n"
        "for p in t.SCENARIOS:\n"
        "    h, ops = t.inputs_of(p.read_bytes())\n"
        "    for name in sorted(t.BOOKS):\n"
        "        sys.stdout.buffer.write(t.transcript(t.BOOKS[name], h, ops))\n"
    )
    expected = b"".join(p.read_bytes() * len(BOOKS) for p in SCENARIOS)
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], env=env,
                              capture_output=True, check=True, timeout=120)
        assert done.stdout == expected, f"output differs with PYTHONHASHSEED={hash_seed}"


def test_every_transcript_line_is_canonical() -> None:
    for path in SCENARIOS:
        for n, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
            assert canonical(orjson.loads(line)) == line, f"{path.name}:{n} is not canonical JSON"


def regenerate(names: list[str]) -> None:
    """Rewrite the outputs of the named scenarios (all when empty) from their inputs, with NaiveBook."""
    for path in SCENARIOS:
        if names and path.stem not in names:
            continue
        header, ops = inputs_of(path.read_bytes())
        path.write_bytes(transcript(NaiveBook, header, ops))
        print(f"rewrote {path} ({len(ops)} inputs): now read every output line against rules.py")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--regen"]:
        sys.exit("usage: python tests/test_corpus.py --regen [SCENARIO_NAME ...]")
    regenerate(sys.argv[2:])
