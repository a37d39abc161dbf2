"""The entry point of a worker process: ``python -m edumatcher.kit._child`` (started by ``_worker.spawn``).

Reads one request (``{"target": "package.module:function", "kwargs": {...}}``, JSON)
from stdin, calls the target, and writes its JSON result to stdout. While the
target runs, ``sys.stdout`` points at stderr, so a stray ``print`` cannot corrupt
the result. Kept apart from ``_worker`` (the parent's side), which the kit's
``__init__`` imports: running a module the package has already imported would
execute it twice.
"""

from __future__ import annotations

import importlib
import sys

import orjson


def main() -> None:
    """Read one request from stdin, run it, write its JSON result to the real stdout."""
    request = orjson.loads(sys.stdin.buffer.read())
    module, sep, name = str(request["target"]).partition(":")
    if not sep or not module or not name:
        raise ValueError(f"target must look like 'package.module:function', not {request['target']!r}")
    function = getattr(importlib.import_module(module), name)
    out = sys.stdout
    sys.stdout = sys.stderr  # a print() inside the target must not land in the result
    try:
        result = function(**request["kwargs"])
    finally:
        sys.stdout = out
    out.buffer.write(orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY))
    out.flush()


if __name__ == "__main__":
    main()
