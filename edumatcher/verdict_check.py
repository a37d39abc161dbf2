"""Temporary alias (issue 23): moved to ``edumatcher.kit.verdict_check``; import from there."""
import sys

from edumatcher.kit import verdict_check as _moved

sys.modules[__name__] = _moved
