"""ONNX Runtime sessions whose optimised graph is kept on disk, its weights memory-mapped.

Making a session of all-MiniLM-L6-v2 spends most of its time optimising the graph (folding
the float16 weights into float32, fusing attention) and copying weights: about three times
what a session of the graph already optimised costs when its weights sit in a file of their
own, which ONNX Runtime maps into memory instead of reading. So the first session of a model
saves the optimised graph (``graph.onnx``) and its weights (``weights.bin``) into a folder of
memcli's cache; later ones load that folder with graph optimisation off. The vectors are the
same bit for bit (the same optimised graph runs). The folder is named after what the graph
depends on (the model file's path, size and time, ONNX Runtime's version, the CPU), written
under a temporary name and renamed when complete; one that does not load is made again, and
one that cannot be written is simply not used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: The optimised graph and its weights inside a cache folder.
GRAPH = "graph.onnx"
WEIGHTS = "weights.bin"
#: Threads wait on the OS instead of spinning between operators: no core burnt while the
#: model is idle, and on a busy machine faster (benchmarks/local_bench.py).
_NO_SPIN = ("session.intra_op.allow_spinning", "0")
_ERRORS_ONLY = 3  # ONNX Runtime's log severity: saving a graph warns that it is CPU-specific


def open_session(model: Path, cache: Path | None) -> Any:
    """An ``onnxruntime.InferenceSession`` of the ONNX file ``model`` on the CPU, through the
    folder of optimised graphs ``cache`` (None: none kept)."""
    import onnxruntime as ort  # type: ignore[import-untyped]  # numpy too: vectors only

    if cache is None:
        return _session(ort, model, _options(ort, optimise=True))
    folder = cache / folder_name(ort.__version__, model)
    if (folder / GRAPH).is_file():
        try:
            return _session(ort, folder / GRAPH, _options(ort, optimise=False))
        except Exception:
            shutil.rmtree(folder, ignore_errors=True)
    try:
        return _save(ort, model, folder)
    except Exception:
        return _session(ort, model, _options(ort, optimise=True))


def folder_name(version: str, model: Path) -> str:
    """``<model>-<build>``: the model file's path, then what else the graph depends on."""
    path = str(model.resolve())
    st = os.stat(path)
    build = json.dumps([version, st.st_size, st.st_mtime_ns, _cpu()])
    return f"{_digest(path)}-{_digest(build)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _cpu() -> str:
    """The CPU's instruction set: an optimised graph may use what this CPU offers."""
    import platform  # onnxruntime has imported it already

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return f"{platform.machine()} {line.partition(':')[2].strip()}"
    except OSError:
        pass  # not Linux
    return f"{platform.machine()} {platform.processor()}"


def _options(ort: Any, *, optimise: bool) -> Any:
    options = ort.SessionOptions()
    options.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if optimise
        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    options.add_session_config_entry(*_NO_SPIN)
    return options


def _session(ort: Any, path: Path, options: Any) -> Any:
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _save(ort: Any, model: Path, folder: Path) -> Any:
    """A session of ``model`` that saves its optimised graph into ``folder`` (written under a
    temporary name, then renamed; another process's folder of the same name wins). Older
    folders of the same model file are removed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=folder.parent))
    try:
        options = _options(ort, optimise=True)
        options.log_severity_level = _ERRORS_ONLY
        options.optimized_model_filepath = str(tmp / GRAPH)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        session = _session(ort, model, options)
        try:
            tmp.rename(folder)
        except OSError:
            pass  # made meanwhile by another process: keep its folder
        else:
            stem = folder.name.split("-", 1)[0]
            for old in folder.parent.glob(f"{stem}-*"):
                if old != folder:
                    shutil.rmtree(old, ignore_errors=True)
        return session
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
