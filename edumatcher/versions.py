"""Temporary alias (issue 23): moved to ``edumatcher.kit.versions``; import from there."""
import sys

from edumatcher.kit import versions as _moved

sys.modules[__name__] = _moved
