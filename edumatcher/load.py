"""Temporary alias (issue 23): moved to ``edumatcher.kit.load``; import from there."""
import sys

from edumatcher.kit import load as _moved

sys.modules[__name__] = _moved
