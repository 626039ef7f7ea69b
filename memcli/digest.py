"""SHA-1 and SHA-256 of short texts (ids, names, markers) without ``hashlib``.

``hashlib`` loads OpenSSL: about a twentieth of a prompt hook or a search, which hash only a
few short strings. CPython's own implementations (``_sha1``, ``_sha2`` from 3.12, ``_sha256``
before) give the same digests; ``hashlib`` is the fallback where they are missing. Long
data (file contents) goes through ``hashlib`` as before.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["sha1_hex", "sha256_hex"]

#: The constructors, found on first use (a fact id is hashed for every entry indexed).
_sha1: Any = None
_sha256: Any = None


def _constructor(name: str, modules: tuple[str, ...]) -> Any:
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, name)


def sha1_hex(data: bytes) -> str:
    """The SHA-1 hex digest of ``data``."""
    global _sha1
    if _sha1 is None:
        _sha1 = _constructor("sha1", ("_sha1",))
    digest: str = _sha1(data).hexdigest()
    return digest


def sha256_hex(data: bytes) -> str:
    """The SHA-256 hex digest of ``data``."""
    global _sha256
    if _sha256 is None:
        _sha256 = _constructor("sha256", ("_sha2", "_sha256"))
    digest: str = _sha256(data).hexdigest()
    return digest
