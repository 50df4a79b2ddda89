"""A compiled module of ours (Cython, at install) loaded again from its ``.py`` source as plain
Python, so that tests run both variants."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


def plain_python(module: ModuleType) -> ModuleType:
    """``module`` loaded from its Python source, whether or not the installed one is compiled."""
    name = module.__name__.rsplit(".", 1)[-1]
    source = Path(module.__file__ or "").with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"{name}_plain", source)
    assert spec is not None and spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return plain


def variants(module: ModuleType, plain: ModuleType) -> list[object]:
    """pytest parameters: the installed module and its plain-Python twin."""
    return [pytest.param(module, id="installed"), pytest.param(plain, id="plain-python")]
