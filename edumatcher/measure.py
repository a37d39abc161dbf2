"""Temporary alias (issue 23): the timing kit moved to ``edumatcher.kit``; import from there."""
from edumatcher.kit import *  # noqa: F403
from edumatcher.kit import __all__  # noqa: F401
from edumatcher.kit._formatter import _align, _percent, _warnings_html  # noqa: F401
from edumatcher.kit._runner import _calibrate, _interleave_ids, _make_sampler  # noqa: F401
