"""Setting a workspace up: ``memcli init`` as a library call (the workspace need not exist yet)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memcli.notes.workspace import find_git_root, init_workspace

if TYPE_CHECKING:
    from memcli.service.datatypes import InitResult


def init(
    root: Path,
    *,
    git: bool = False,
    hooks: bool = False,
    local: str | None = None,
    model_path: str | None = None,
) -> InitResult:
    """Create ``memory/``, ``MEMORY.md``, the ``.gitignore`` entry and (in git) the union
    merge in ``.gitattributes``; with ``git``, ``git init`` first unless already in a
    repository; with ``hooks``, install the git hooks; with ``local`` (a fastembed model
    name), set ``embedding.model = "local/<local>"`` (and ``embedding.model_path``) in the
    workspace's ``memcli.toml``, trusted as the user's own edit. Idempotent."""
    from memcli.service.datatypes import InitResult  # init runs once: not on every start-up

    root.mkdir(parents=True, exist_ok=True)
    result = InitResult(root.resolve())
    if git or hooks:
        # the git room is loaded only when asked for: init is also the first command of all
        from memcli.git.repo import git_init, require_repo

        if git and find_git_root(root) is None:
            git_init(root)
            result.created.append("git repository")
        require_repo(root)
    result.created += init_workspace(root)
    if local:
        from memcli.config import operations  # settings writes: only with --local
        from memcli.providers.models import full_name  # names only: no model is loaded

        model = f"local/{full_name(local)}"
        operations.set_setting("embedding.model", model, root)
        result.created.append(f"memcli.toml: embedding.model = {model}")
        if model_path:
            operations.set_setting("embedding.model_path", model_path, root)
            result.created.append(f"memcli.toml: embedding.model_path = {model_path}")
    if hooks:
        from memcli.git.hooks import install  # git code: only with --hooks

        report = install(root)
        result.warnings.extend(report.warnings)
        result.hooks = [h.as_dict() for h in report.hooks]
        fresh = [h.name for h in report.hooks if h.action.startswith(("installed", "updated"))]
        if fresh:
            result.created.append(f"git hooks ({', '.join(fresh)})")
    return result
