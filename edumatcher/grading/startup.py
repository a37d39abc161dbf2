"""Process start-up tweaks for the grading commands and workers (processes this package owns).

``jsonschema`` (pulled in by nbformat) imports ``rfc3987_syntax`` when it is installed, only to
validate IRI-formatted strings; that import compiles a grammar and costs about 3 s on this course's
2-core machine (measured once with ``python -X importtime``, under load). Notebook validation never
checks IRIs, and jsonschema skips the feature when the import fails, so grading processes block it:
one grading worker starts per submission, and 3 s each adds up over a class.
"""

from __future__ import annotations

import sys

__all__ = ["avoid_slow_imports"]


def avoid_slow_imports() -> None:
    """Make ``import rfc3987_syntax`` fail fast in this process, unless something already imported it."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None => ImportError
