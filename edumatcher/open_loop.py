"""Temporary alias (issue 23): moved to ``edumatcher.kit.open_loop``; import from there."""
import sys

from edumatcher.kit import open_loop as _moved

sys.modules[__name__] = _moved
