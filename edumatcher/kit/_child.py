"""The entry point of a worker process: ``python <kit>/_child.py`` (started by ``_worker.spawn``).

Reads one request (``{"target": "package.module:function", "kwargs": {...}}``, JSON)
from stdin, calls the target, and writes its JSON result to stdout. While the
target runs, ``sys.stdout`` points at stderr, so a stray ``print`` cannot corrupt
the result.

It runs as a script, not with ``-m``: ``-m edumatcher.kit._child`` would import the
package and the whole kit first (0.2 s of CPU measured here, against 0.05 s for
this file and ``_timing``), and a fresh-process verdict starts twelve workers. The
kit's own worker target, ``edumatcher.kit._timing:paired_rounds``, is loaded from
its file alone (standard library only) and registered under its package name, so a
factory that later imports ``edumatcher.kit`` shares it. Any other target is
imported normally (``PYTHONPATH`` holds the checkout, ``_worker._child_env``).
This file must stay standard-library only.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    # Run as a script, Python put this file's folder first on sys.path, where a kit module named like
    # a standard one would shadow it. Take it off before importing anything else.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

_TIMING = "edumatcher.kit._timing"


def _function(target: str) -> Any:
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"target must look like 'package.module:function', not {target!r}")
    if module == _TIMING and module not in sys.modules:
        spec = importlib.util.spec_from_file_location(module, os.path.join(_HERE, "_timing.py"))
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[module] = loaded
        spec.loader.exec_module(loaded)
    return getattr(importlib.import_module(module), name)


def _encode(result: Any) -> bytes:
    try:
        return json.dumps(result, allow_nan=False).encode()
    except (TypeError, ValueError):  # numpy values, or NaN: orjson writes them as the parent reads them (NaN as null)
        import orjson

        return orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY)


def main() -> None:
    """Read one request from stdin, run it, write its JSON result to the real stdout."""
    request = json.loads(sys.stdin.buffer.read())
    function = _function(str(request["target"]))
    out = sys.stdout
    sys.stdout = sys.stderr  # a print() inside the target must not land in the result
    try:
        result = function(**request["kwargs"])
    finally:
        sys.stdout = out
    out.buffer.write(_encode(result))
    out.flush()


if __name__ == "__main__":
    main()
