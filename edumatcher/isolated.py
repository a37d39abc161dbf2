"""Temporary alias (issue 23): moved to ``edumatcher.kit._worker``; import from there."""
import sys

from edumatcher.kit import _worker as _moved

sys.modules[__name__] = _moved
