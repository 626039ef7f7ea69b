"""Reading a conversation file (the text itself is parsed by :mod:`memcli.flush.conversation`)."""

from __future__ import annotations

from pathlib import Path

from memcli.errors import BadInput


def read_conversation(spec: str | Path) -> str:
    """The text of conversation file ``spec`` (``~`` expanded, a UTF-8 BOM dropped)."""
    path = Path(spec).expanduser()
    if not path.is_file():
        raise BadInput(f"no such file: {spec}", hint="give a conversation file, or - for stdin")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInput(f"{spec} is not valid UTF-8 text") from None
    except OSError as exc:
        raise BadInput(f"cannot read {spec}: {exc.strerror}") from None
