"""Temporary alias (issue 23): moved to ``edumatcher.kit.version_suite``; import from there."""
import sys

from edumatcher.kit import version_suite as _moved

sys.modules[__name__] = _moved
