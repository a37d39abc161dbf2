"""The ``bench`` subcommand: ``python -m edumatcher bench {book,engine,gc,latency,bounds}``.

The benchmarks themselves live in ``edumatcher.benchmarks``; this module only
wires them to the command line, with the options they share defined once.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

__all__ = ["add_bench_parser", "BENCHMARKS", "OWN_OPTIONS"]

BENCHMARKS: dict[str, str] = {
    "book": "OrderBook vs the bare heap book (and NaiveBook) on the standard workload.",
    "engine": "The full message path, bytes in to bytes out: messages/s and handling latency.",
    "gc": "An opening ramp then a steady stream, default collector vs GcPolicy.",
    "latency": "Response time (completion - intended send) against offered load, beside service time.",
    "bounds": "Issue 15's rows: one message's work and memory in the book, published frames, the queue's count.",
}

OWN_OPTIONS: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "gc": (("--lull-every", {"type": int, "metavar": "N",
                             "help": "an idle tick every N steady messages (default: gc_bench.LULL_EVERY, printed "
                                     "with the method): the policy's young collections walk what came to rest in between"}),),
    "latency": (("--arrivals", {"choices": ("poisson", "constant"),
                                "help": "arrival process of the open-loop generator (default: poisson)"}),),
}
"""Options only one benchmark takes: flag -> ``add_argument`` keywords. Given ones reach its ``run()`` by name."""


def add_bench_parser(sub: Any) -> None:
    """Register ``bench`` and one sub-subcommand per benchmark."""
    bench = sub.add_parser(
        "bench",
        help="run a benchmark and print its figures",
        description="Run a benchmark and print its figures. Example: python -m edumatcher bench book --quick",
    )
    names = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for name, summary in BENCHMARKS.items():
        p = names.add_parser(name, help=summary, description=f"{summary} Example: python -m edumatcher bench {name} --quick")
        p.add_argument("--quick", action="store_true", help="a small version that finishes in seconds")
        p.add_argument("--seed", type=int, default=1, help="workload seed (default 1)")
        p.add_argument("--repeat", type=int, default=None, help="repeats per contender (default: benchmark's own, at least 5)")
        own = [p.add_argument(flag, default=None, **keywords).dest for flag, keywords in OWN_OPTIONS.get(name, ())]
        p.set_defaults(func=_run, benchmark=name, own_options=own)


def _run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"edumatcher.benchmarks.{args.benchmark}_bench")
    extra = {dest: getattr(args, dest) for dest in args.own_options if getattr(args, dest) is not None}
    return int(module.run(quick=args.quick, seed=args.seed, repeat=args.repeat, **extra) or 0)
