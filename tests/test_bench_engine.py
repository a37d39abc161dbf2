"""``bench engine``: runs end to end through the CLI, prints its method and figures; no speed is asserted."""

from __future__ import annotations

import re

import pytest

from edumatcher import messages, workloads
from edumatcher.benchmarks import engine_bench, heap_book_goal
from edumatcher.cli import main
from edumatcher.engine import Engine
from edumatcher.model import RejectReason
from edumatcher.sinks import DiscardingSink, IterableSource


def test_bench_engine_quick_runs_and_reports(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap_book_goal, "QUICK_ISSUE_OPS", 3_000)  # behaviour, not figures
    assert main(["bench", "engine", "--quick"]) == 0
    out = capsys.readouterr().out
    # Method and interpreter come before any figure.
    assert out.index("method:") < out.index("interpreter:") < out.index("[2/5]")
    assert "CPython" in out or "PyPy" in out
    assert "codec:" in out
    for phrase in ("msg/s", "p50", "p99", "p99.9", "OrderBook (direct)", "BareBook (direct)",
                   "ratio Engine msg/s / BareBook ops/s", "target (issue): >= 150,000 msg/s", "quoted: Python engine notes"):
        assert phrase in out, phrase
    # Judged from the interval (issue 26): met, NOT met or too close to call.
    assert re.search(r"this run: [\d,]+ msg/s \(95 % CI [\d,]+–[\d,]+\), (met|NOT met|too close to call)", out)
    assert "MISMATCH" not in out
    assert out.count("pass 5/5") == 9  # two races of two contenders, then five, five timed passes each
    # The issues' conditions, last: the message-path ratio against its goal, collector on, against the lean book.
    assert "[5/5] the issues' conditions: standard(3,000, seed=1), collector ON" in out
    assert re.search(r"goal: Engine msg/s / LeanBook ops/s \(issue 26\) >= 0\.15; this run: \d\.\d{3} "
                     r"\(95 % CI \d\.\d{3}–\d\.\d{3}\), (met|NOT met|too close to call)", out)
    assert "0.133 (0.127-0.146)" in out and "quoted from issues 15 and 26" in out
    # The goal's ceiling for this message path: the book's own work taken out, judged the same way.
    ceiling = out[out.index("the message path's ceiling:"):]
    assert re.match(r"the message path's ceiling: [\d.]+ (ns|µs|ms) per message outside the book's own work\n", ceiling)
    assert re.search(r"^ +Engine/LeanBook \d\.\d{3} \(93\.8 % interval \d\.\d{3}–\d\.\d{3}\), "
                     r"(met|NOT met|too close to call) against 0\.15$", ceiling, re.MULTILINE)


def test_bench_engine_refuses_too_few_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--quick", "--repeat", "2"]) == 1
    assert capsys.readouterr().err.startswith("Error: --repeat 2 is too few")


def test_encoded_workload_is_what_a_client_would_send() -> None:
    ops = workloads.steady_state(400, seed=2, depth=40)
    payloads = workloads.encode_workload(ops)
    assert len(payloads) == len(ops)
    for op, payload in zip(ops, payloads, strict=True):
        msg = messages.loads(payload)
        messages.builders.check(msg)
        if op[0] == workloads.NEW and op[5] is not None:
            assert msg["price"] == f"{op[5] // 100}.{op[5] % 100:02d}"
    engine = Engine([workloads.SYMBOL])
    engine.run(IterableSource(payloads), DiscardingSink())
    assert set(engine.rejects) <= {RejectReason.UNKNOWN_ORDER}  # only cancels of filled orders


def test_ring_holds_every_sample_of_a_pass() -> None:
    assert engine_bench._ring_size(16) == 2
    size = engine_bench._ring_size(200_000)
    assert size >= 200_000 // 16 and size & (size - 1) == 0
