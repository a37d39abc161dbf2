"""Temporary alias (issue 23): the comparison moved to ``edumatcher.kit._compare``; import from ``edumatcher.kit``."""
from edumatcher.kit._compare import *  # noqa: F403
from edumatcher.kit._compare import RESAMPLES, __all__, _bootstrap  # noqa: F401
