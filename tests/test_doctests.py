"""Run every docstring example in the package, so the documented behaviour stays true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import edumatcher

# Modules whose import needs optional course packages are still collected; a missing one skips.
MODULES = sorted(
    info.name for info in pkgutil.walk_packages(edumatcher.__path__, prefix="edumatcher.") if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", ["edumatcher", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
