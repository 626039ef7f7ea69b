"""Core commands: init, add, index, search, status, files, get."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from memcli.cli import render
from memcli.cli.app import app, state
from memcli.errors import BadInput

JSON = typer.Option(False, "--json", help="Print JSON (stable field names, see README).")


@app.command()
def init(
    ctx: typer.Context,
    path: Path | None = typer.Argument(
        None, help="Folder to set up (default: -w, $MEMCLI_WORKSPACE, or here)."
    ),
    git_init: bool = typer.Option(
        False, "--git", help="Run 'git init' there unless it is already in a git repository."
    ),
    hooks: bool = typer.Option(
        False, "--hooks", help="Install git hooks that re-index after commit/merge/checkout."
    ),
    as_json: bool = JSON,
) -> None:
    """Create memory/, MEMORY.md, .gitignore and (in git) .gitattributes; idempotent."""
    from memcli.notes.workspace import init_workspace

    st = state(ctx)
    root = path or Path(st.workspace or os.environ.get("MEMCLI_WORKSPACE") or ".")
    root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    if git_init or hooks:
        from memcli.git.repo import git_init as run_git_init
        from memcli.git.repo import require_repo
        from memcli.notes.workspace import find_git_root

        if git_init and find_git_root(root) is None:
            run_git_init(root)
            created.append("git repository")
        require_repo(root)
    created += init_workspace(root)
    payload: dict[str, Any] = {"workspace": str(root.resolve()), "created": created}
    if hooks:
        from memcli.git.hooks import install

        report = install(root)
        st.out.warnings(report.warnings)
        payload["hooks"] = [h.as_dict() for h in report.hooks]
        fresh = [h.name for h in report.hooks if h.action.startswith(("installed", "updated"))]
        if fresh:
            created.append(f"git hooks ({', '.join(fresh)})")
    if as_json:
        st.out.json(payload)
    else:
        render.init_result(st.out, payload)


@app.command()
def add(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="The fact to remember, or '-' to read it from stdin."),
    to: str | None = typer.Option(None, "--to", help="Append to this file under memory/."),
    evergreen: bool = typer.Option(False, "--evergreen", help="Append to memory/MEMORY.md."),
    ns: str | None = typer.Option(None, "--ns", help="Namespace: memory/NS/YYYY-MM-DD.md."),
    type_: str | None = typer.Option(None, "--type", "-t", help="Entry type, e.g. decision."),
    tag: list[str] = typer.Option([], "--tag", help="Tag (repeatable)."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Do not redact secrets."),
    commit: bool = typer.Option(
        False, "--commit", help="git commit the file written (nothing else), naming the fact."
    ),
    as_json: bool = JSON,
) -> None:
    """Append a fact as '- HH:MM [type] text #tags' and index the file."""
    st = state(ctx)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise BadInput("empty fact", hint="give the text to remember")
    sha: str | None = None
    with st.memory() as mem:
        if commit:
            mem.require_repo()  # refuse before writing anything
        result = mem.add(
            text,
            to=to,
            evergreen=evergreen,
            namespace=ns,
            type=type_,
            tags=tag,
            redact=not no_redact,
        )
        if commit:
            sha = mem.commit_added(result)
    st.out.warnings(result.warnings)
    if as_json:
        st.out.json({**result.as_dict(), **({"commit": sha} if commit else {})})
    else:
        render.add_result(st.out, result)
        if sha:
            st.out.line(f"committed {sha[:10]}")


@app.command()
def index(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(None, help="Only these files or folders."),
    force: bool = typer.Option(False, "--force", help="Rebuild the whole index."),
    no_embed: bool = typer.Option(
        False, "--no-embed", help="Keyword index only: do not compute vectors now."
    ),
    as_json: bool = JSON,
) -> None:
    """Bring the index in line with the Markdown (incremental)."""
    st = state(ctx)
    with st.memory() as mem, st.out.progress("indexing") as progress:
        report = mem.index(paths or None, force=force, progress=progress, embed=not no_embed)
    st.out.warnings(report.warnings)
    if as_json:
        st.out.json(report.as_dict())
    elif not st.quiet:
        render.index_report(st.out, report)


@app.command()
def search(
    ctx: typer.Context,
    query: str | None = typer.Argument(None, help="What to look for (omit with --batch)."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="Number of results."),
    min_score: float | None = typer.Option(
        None, "--min-score", help="Drop results whose final score (after decay) is below (0..1)."
    ),
    source: list[str] = typer.Option([], "--source", help="Only this namespace (repeatable)."),
    type_: list[str] = typer.Option([], "--type", help="Only entries of this type."),
    tag: list[str] = typer.Option([], "--tag", help="Only entries with this tag."),
    since: str | None = typer.Option(None, "--since", help="Only files dated on/after."),
    until: str | None = typer.Option(None, "--until", help="Only files dated on/before."),
    path: str | None = typer.Option(None, "--path", help="Only paths matching this glob."),
    decay: bool | None = typer.Option(
        None,
        "--decay/--no-decay",
        help="Temporal decay: older dated files score lower (MEMORY.md, undated files exempt).",
    ),
    strategy: str | None = typer.Option(
        None,
        "--strategy",
        help="keyword, vector or hybrid (default auto: hybrid when an embedding model is set).",
    ),
    mmr: bool | None = typer.Option(
        None, "--mmr/--no-mmr", help="Diversify results (MMR): near-duplicates do not crowd out."
    ),
    mmr_lambda: float | None = typer.Option(
        None,
        "--mmr-lambda",
        help="MMR trade-off 0..1: 1 = relevance only, lower = more diverse (implies --mmr).",
    ),
    explain: bool = typer.Option(
        False, "--explain", help="Show how each score came to be (JSON: 'explain' per result)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="text, json or context (one Markdown block for a prompt)."
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", help="Token budget of --format context (estimate: characters / 4)."
    ),
    as_json: bool = JSON,
    jsonl: bool = typer.Option(False, "--jsonl", help="One JSON result per line."),
    files_only: bool = typer.Option(False, "--files", help="Only the paths of matching files."),
    batch: bool = typer.Option(False, "--batch", help="Queries from stdin, one JSON per line."),
) -> None:
    """Search memory (BM25 keyword search; hybrid when an embedding model is set).

    Results are the matching list items or paragraphs with a little context, best first.
    """
    from memcli.cli import searching

    code = searching.run(
        state(ctx),
        query,
        limit=limit,
        min_score=min_score,
        source=source,
        type_=type_,
        tag=tag,
        since=since,
        until=until,
        path=path,
        decay=decay,
        strategy=strategy,
        mmr=mmr,
        mmr_lambda=mmr_lambda,
        explain=explain,
        fmt=fmt,
        max_tokens=max_tokens,
        as_json=as_json,
        jsonl=jsonl,
        files_only=files_only,
        batch=batch,
    )
    if code:
        raise typer.Exit(code)


@app.command()
def status(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Workspace, index, counts, search mode and files changed since the last index."""
    st = state(ctx)
    with st.memory() as mem:
        info = mem.status()
    if as_json:
        st.out.json(info)
    else:
        st.out.warnings(info["warnings"])
        render.status(st.out, info)


@app.command()
def files(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Indexed files with their chunks, source, date and evergreen flag."""
    st = state(ctx)
    with st.memory() as mem:
        rows = mem.files()
    st.out.warnings(mem.warnings)
    if as_json:
        st.out.json({"files": rows})
    else:
        render.files(st.out, rows)


@app.command()
def get(
    ctx: typer.Context,
    location: str = typer.Argument(..., help="PATH[:LINE[:COUNT]], e.g. memory/2026-11-22.md:12:3"),
    as_json: bool = JSON,
) -> None:
    """Print lines of a memory file (to expand a search hit)."""
    st = state(ctx)
    with st.memory() as mem:
        result = mem.get(location)
    if as_json:
        st.out.json(result.as_dict())
    else:
        for line in result.lines:
            st.out.line(line)
