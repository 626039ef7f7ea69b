"""The project's development tools, loaded for tests (they live outside the installed package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
GENDOCS = ROOT / ".ci" / "gendocs.py"
GENTOUR = ROOT / ".ci" / "gentour.py"


def load_gendocs() -> ModuleType:
    """``.ci/gendocs.py``, the generator of the completions and the man page."""
    if "gendocs" in sys.modules:
        return sys.modules["gendocs"]
    spec = importlib.util.spec_from_file_location("gendocs", GENDOCS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gendocs"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def load_gentour() -> ModuleType:
    """``.ci/gentour.py``, which writes the tour of ``docs/tour.md`` from a run of ``.ci/demo``."""
    spec = importlib.util.spec_from_file_location("gentour", GENTOUR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
