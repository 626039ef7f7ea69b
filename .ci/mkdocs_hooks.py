"""MkDocs hooks (mkdocs.yml): pages kept outside ``docs/`` join the site where they are.

ARCHITECTURE.md stays at the top of the repository and benchmarks/RESULTS.md beside the
benchmarks that write it; the site shows them as ``architecture.md`` and ``results.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = {
    "architecture.md": ROOT / "ARCHITECTURE.md",
    "results.md": ROOT / "benchmarks" / "RESULTS.md",
}


def on_files(files: Files, config: Any) -> Files:
    for uri, source in OUTSIDE.items():
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files
