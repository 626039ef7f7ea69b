"""Trust in a workspace's memcli.toml: ``memcli trust``, ``--show``, ``--revoke``, ``--list``.

A memcli.toml comes with a clone, so it is someone else's word. Settings that reach outside the
workspace or spend a credential (``Setting.needs_trust``: the providers' models, hosts and key
variables, the flush prompt file, the shared cache's size, starting an engine) are honoured
from it only after the user has trusted its content, like git's ``safe.directory`` or direnv's
``allow``; until then settings that spend money or hold a process stay within a safe range
(``Setting.safe``). The user config.toml records each trusted file by path with the sha256 of
its content and of the files its settings name (the prompt file), so a change to any of them
needs trusting again::

    [trust]
    "/home/ada/notes/memcli.toml" = "sha256:9f2c..."

The loader (:mod:`memcli.config.layers`) applies the rule; this module reads and writes the
records (tomlkit, keeping the rest of the file as it was) and says what a workspace's state is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.config.layers import (
    TRUST_TABLE,
    digest,
    parse_toml,
    read_bytes,
    read_toml,
    trust_key,
    trust_settings,
    trusted_files,
    trusted_paths,
    user_config_path,
    workspace_config_path,
)
from memcli.errors import BadInput, ConfigError

#: What a workspace memcli.toml's trust can be.
TRUSTED, CHANGED, UNTRUSTED, NO_FILE = "trusted", "changed", "untrusted", "no-file"


@dataclass
class TrustState:
    """A workspace memcli.toml: its digest now, the digest the user trusted, the settings
    needing trust it sets, and which of them are ignored (all of them unless trusted)."""

    file: Path
    exists: bool
    sha256: str | None
    trusted_sha256: str | None
    sets: dict[str, Any] = field(default_factory=dict)
    changed: bool = False  # the user config was written (trust, revoke)
    #: the files the trust covers: memcli.toml and every file its settings name
    covers: list[str] = field(default_factory=list)

    @property
    def state(self) -> str:
        if not self.exists:
            return NO_FILE
        if self.trusted_sha256 is None:
            return UNTRUSTED
        return TRUSTED if self.trusted_sha256 == self.sha256 else CHANGED

    @property
    def ignored(self) -> list[str]:
        return [] if self.state == TRUSTED else sorted(self.sets)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": str(self.file),
            "state": self.state,
            "sha256": self.sha256,
            "trusted_sha256": self.trusted_sha256,
            "sets": self.sets,
            "ignored": self.ignored,
            "changed": self.changed,
            "covers": self.covers,
        }


@dataclass
class TrustedFile:
    """One record of the user config's [trust] table and whether it still holds."""

    file: str
    sha256: str
    state: str  # trusted, changed, or "missing" (the file is gone)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "sha256": self.sha256, "state": self.state}


def trust_state(root: Path) -> TrustState:
    """The trust of the memcli.toml in the workspace folder ``root``."""
    path = workspace_config_path(root)
    raw = read_bytes(path)
    records = _records()
    if raw is None:
        return TrustState(path, False, None, records.get(trust_key(path)))
    data = parse_toml(raw, path)
    covers = [str(path), *(str(p) for _, p in trusted_paths(data, root))]
    return TrustState(
        path,
        True,
        digest(raw, data, root),
        records.get(trust_key(path)),
        trust_settings(data),
        covers=covers,
    )


def trust(root: Path) -> TrustState:
    """Trust the content the workspace's memcli.toml has now (recorded by its digest)."""
    state = trust_state(root)
    if not state.exists:
        raise BadInput(
            f"{state.file} does not exist: there is nothing to trust",
            hint="settings in your user config and environment always apply",
        )
    state.changed = _write(trust_key(state.file), state.sha256)
    state.trusted_sha256 = state.sha256
    return state


def revoke(root: Path) -> TrustState:
    """Forget the trust in the workspace's memcli.toml (its settings needing trust are then
    ignored again)."""
    state = trust_state(root)
    state.changed = _write(trust_key(state.file), None)
    state.trusted_sha256 = None
    return state


def list_trusted() -> list[TrustedFile]:
    """Every trusted file recorded in the user config, with whether it still holds."""
    out = []
    for name, recorded in sorted(_records().items()):
        path = Path(name)
        try:
            raw = read_bytes(path)
            now = None if raw is None else digest(raw, parse_toml(raw, path), path.parent)
        except ConfigError:
            now = None
        state = "missing" if now is None else TRUSTED if now == recorded else CHANGED
        out.append(TrustedFile(name, recorded, state))
    return out


def retrust_after_edit(root: Path, before: TrustState) -> bool:
    """After memcli itself edited memcli.toml (``config set/unset``): keep the trust the
    file had. A file that was trusted, or set nothing needing trust, is recorded again with
    its new content; an untrusted one stays untrusted. Returns whether a record was written."""
    if before.exists and before.state != TRUSTED and before.sets:
        return False
    after = trust_state(root)
    if not after.exists or (not after.sets and before.trusted_sha256 is None):
        return False
    return _write(trust_key(after.file), after.sha256)


def _records() -> dict[str, str]:
    path = user_config_path()
    return dict(trusted_files(read_toml(path), path))


def _write(key: str, value: str | None) -> bool:
    """Set (or remove, ``value`` None) one record of the user config's [trust] table,
    keeping the rest of the file; returns whether the file changed."""
    import tomlkit  # only when trust is written (start-up time)

    from memcli.config.files import load_document, replace_file  # with tomlkit: writing only

    path = user_config_path()
    doc = load_document(path)
    trusted_files(doc.unwrap(), path)  # a malformed table is refused, not overwritten
    table = doc.get(TRUST_TABLE)
    if value is None:
        if table is None or key not in table:
            return False
        del table[key]
        if not table:
            del doc[TRUST_TABLE]
    else:
        if table is None:
            table = tomlkit.table()
            doc[TRUST_TABLE] = table
        if table.get(key) == value:
            return False
        table[key] = value
    replace_file(path, tomlkit.dumps(doc))
    return True
