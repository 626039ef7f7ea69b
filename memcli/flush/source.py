"""Reading a conversation file (the text itself is parsed by :mod:`memcli.flush.conversation`)."""

from __future__ import annotations

from pathlib import Path

from memcli.errors import BadInput


def read_conversation(spec: str | Path) -> str:
    """The text of conversation file ``spec`` (``~`` expanded, a UTF-8 BOM dropped).

    A pipe or other stream (``memcli flush <(cmd)``, a named pipe) is read to its end like a
    file; a folder or a missing path is refused."""
    path = Path(spec).expanduser()
    if path.is_dir():
        raise BadInput(f"{spec} is a folder", hint="give a conversation file, or - for stdin")
    try:
        with path.open("rb") as fh:  # not is_file(): a pipe is not a regular file
            data = fh.read()
    except FileNotFoundError:
        raise BadInput(
            f"no such file: {spec}", hint="give a conversation file, or - for stdin"
        ) from None
    except OSError as exc:
        raise BadInput(f"cannot read {spec}: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInput(f"{spec} is not valid UTF-8 text") from None
