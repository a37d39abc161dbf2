"""ByteBoundedQueue: never holds more than its cap, sheds and counts instead, and keeps FIFO order."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edumatcher.bounded_queue import ByteBoundedQueue


def test_put_sheds_and_counts_what_does_not_fit() -> None:
    q: ByteBoundedQueue[bytes] = ByteBoundedQueue(10)
    assert q.put(b"x" * 6) is True
    assert q.put(b"y" * 5) is False  # 11 > 10: shed, not queued
    assert q.put(b"z" * 4) is True  # exactly 10 fits
    assert (len(q), q.bytes, q.peak_bytes) == (2, 10, 10)
    assert (q.shed_items, q.shed_bytes, q.put_items, q.put_bytes) == (1, 5, 2, 10)
    assert list(q) == [b"x" * 6, b"z" * 4]


def test_an_item_larger_than_the_cap_never_fits_even_when_empty() -> None:
    q: ByteBoundedQueue[bytes] = ByteBoundedQueue(3)
    assert q.put(b"abcd") is False
    assert len(q) == 0 and q.bytes == 0 and q.shed_items == 1 and q.shed_bytes == 4


def test_get_frees_exactly_what_put_counted_and_keeps_fifo_order() -> None:
    q: ByteBoundedQueue[bytes] = ByteBoundedQueue(100)
    for payload in (b"a", b"bb", b"ccc"):
        assert q.put(payload)
    assert q.get() == b"a" and q.bytes == 5
    assert q.drain(1) == [b"bb"] and q.bytes == 3
    assert q.drain() == [b"ccc"] and q.bytes == 0 and not q
    with pytest.raises(IndexError, match="empty ByteBoundedQueue"):
        q.get()
    assert q.drain() == []


def test_size_is_taken_once_at_put_so_a_mutated_item_cannot_corrupt_the_accounting() -> None:
    q: ByteBoundedQueue[bytearray] = ByteBoundedQueue(100)
    item = bytearray(10)
    q.put(item)
    item.extend(bytes(50))  # the caller changes the item after queueing it
    assert q.bytes == 10
    q.get()
    assert q.bytes == 0


def test_custom_size_of_and_its_validation() -> None:
    q: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: len(s.encode()))
    assert q.put("é" * 4) is True and q.bytes == 8
    bad: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: -1)
    with pytest.raises(ValueError, match="non-negative int"):
        bad.put("x")
    assert len(bad) == 0 and bad.shed_items == 0, "a refused size changes nothing"
    weird: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: True)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError):
        weird.put("x")


@pytest.mark.parametrize("cap", [0, -1, 2.5, True, "10"])
def test_max_bytes_must_be_a_positive_int(cap: object) -> None:
    with pytest.raises(ValueError, match="positive int"):
        ByteBoundedQueue(cap)  # type: ignore[arg-type]


def test_drain_refuses_a_bad_count() -> None:
    with pytest.raises(ValueError):
        ByteBoundedQueue(5).drain(-1)


def test_stats_add_up() -> None:
    q: ByteBoundedQueue[bytes] = ByteBoundedQueue(5)
    for payload in (b"123", b"45", b"6", b"78"):
        q.put(payload)
    s = q.stats()
    assert s["put_items"] + s["shed_items"] == 4
    assert s["bytes"] == 5 and s["items"] == 2 and s["shed_fraction"] == 0.5
    assert "shed_items=2" in repr(q)


@settings(max_examples=150, deadline=None)
@given(cap=st.integers(1, 64),
       steps=st.lists(st.one_of(st.integers(0, 40).map(lambda n: ("put", n)), st.just(("get", 0))), max_size=80))
def test_random_steps_match_a_plain_model(cap: int, steps: list[tuple[str, int]]) -> None:
    q: ByteBoundedQueue[bytes] = ByteBoundedQueue(cap)
    model: deque[bytes] = deque()
    shed = 0
    for kind, n in steps:
        if kind == "put":
            payload = bytes(n)
            fits = sum(map(len, model)) + n <= cap
            assert q.put(payload) is fits
            if fits:
                model.append(payload)
            else:
                shed += 1
        elif model:
            assert q.get() == model.popleft()
        assert q.bytes == sum(map(len, model)) <= cap
        assert len(q) == len(model) and list(q) == list(model)
        assert q.shed_items == shed
        assert q.peak_bytes <= cap
