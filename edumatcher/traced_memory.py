"""Temporary alias (issue 23): moved to ``edumatcher.kit.traced_memory``; import from there."""
import sys

from edumatcher.kit import traced_memory as _moved

sys.modules[__name__] = _moved
