"""Core commands: init, add, index, search, status, files, get."""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from typing import Any

import typer

from memcli.cli import render, search_args
from memcli.cli.app import app, state
from memcli.cli.runtime import State
from memcli.cli.search_args import JSON_HELP, SearchArgs
from memcli.errors import BadInput

JSON = typer.Option(False, "--json", help=JSON_HELP)


#: The model ``init --local`` sets (English, 384 dimensions, 45 MB).
LOCAL_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"
#: ``--local-model`` values that list the models instead of setting one.
LIST_MODELS = ("list", "?")


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
    local: bool = typer.Option(
        False,
        "--local",
        help="Semantic search with a local model (needs memcli[local]): sets embedding.model.",
    ),
    local_model: str = typer.Option(
        LOCAL_DEFAULT,
        "--local-model",
        help="The model --local sets: a fastembed name or a short name (all-MiniLM-L6-v2,"
        " English; multilingual-e5-small, about 100 languages). 'list' shows each with its"
        " size, load time and embedding speed.",
    ),
    model_path: str | None = typer.Option(
        None, "--model-path", help="Folder holding the local model's files (offline machines)."
    ),
    as_json: bool = JSON,
) -> None:
    """Create memory/, MEMORY.md, .gitignore and (in git) .gitattributes; idempotent."""
    from memcli.memory import Memory  # the service layer: not on --help

    st = state(ctx)
    if local_model.strip().lower() in LIST_MODELS:
        from memcli.providers import models  # a table of names and figures: nothing is set up

        rows = [models.describe(m) for m in models.MODELS]
        if as_json:
            st.out.json({"models": rows})
        else:
            render.local_models(st.out, rows)
        return
    root = path or Path(st.workspace or os.environ.get("MEMCLI_WORKSPACE") or ".")
    if model_path and not local:
        raise BadInput("--model-path goes with --local")
    result = Memory.init(
        root,
        git=git_init,
        hooks=hooks,
        local=local_model if local else None,
        model_path=str(Path(model_path).expanduser().resolve()) if model_path else None,
    )
    st.out.warnings(result.warnings)
    if as_json:
        st.out.json(result.as_dict())
    else:
        render.init_result(st.out, result.as_dict())


@app.command()
def add(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="The fact to remember, or '-' to read it from stdin."),
    to: str | None = typer.Option(None, "--to", help="Append to this file under memory/."),
    evergreen: bool = typer.Option(False, "--evergreen", help="Append to memory/MEMORY.md."),
    ns: str | None = typer.Option(None, "--ns", help="Namespace: memory/NS/YYYY-MM-DD.md."),
    type_: str | None = typer.Option(None, "--type", "-t", help="Entry type, e.g. decision."),
    tag: list[str] = typer.Option([], "--tag", "--tags", help="Tag (repeatable)."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Do not redact secrets."),
    commit: bool = typer.Option(
        False, "--commit", help="git commit the file written (nothing else), naming the fact."
    ),
    expires: str | None = typer.Option(
        None,
        "--expires",
        metavar="DATE",
        help="It stops applying: 30d, 6w, 3m, 1y, 'in 2 weeks' or a date YYYY-MM-DD.",
    ),
    as_json: bool = JSON,
) -> None:
    """Append a fact as '- HH:MM [type] text #tags' and index the file."""
    st = state(ctx)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise BadInput("empty fact", hint="give the text to remember")
    given: dict[str, Any] = {
        "to": to,
        "evergreen": evergreen,
        "namespace": ns,
        "type": type_,
        "tags": list(tag),
        "redact": not no_redact,
        "commit": commit,
        "expires": expires,
    }
    from memcli.cli.via_engine import add_via_engine  # a socket: no heavy imports
    from memcli.operations import AddAsk

    # a commit runs in process: git takes its identity and hooks from the caller's environment
    if not commit and add_via_engine(st, AddAsk(text, **given), as_json):
        return  # a running engine added it (and printed what add prints)
    with st.memory() as mem:
        result = mem.add(text, **given)
    st.out.warnings(result.warnings)
    if as_json:
        st.out.json(result.as_dict())
    else:
        render.add_result(st.out, result)


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


def search(ctx: typer.Context, query: list[str] | None, **options: Any) -> None:
    """Search memory (BM25 keyword search; hybrid when an embedding model is set).

    Results are the matching list items or paragraphs with a little context, best first.
    """
    from memcli.cli import searching  # the search stack: not on --help

    words = " ".join(query) if query else None  # an unquoted query's words, joined
    code = searching.run(state(ctx), words, SearchArgs(**options))
    if code:
        raise typer.Exit(code)


_TYPES = {"flag": bool, "switch": bool | None, "int": int | None, "float": float | None}


def _search_parameters() -> list[inspect.Parameter]:
    """The Typer parameters of ``search``, made from its options (declared once)."""
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("ctx", keyword, annotation=typer.Context),
        inspect.Parameter(
            "query",
            keyword,
            annotation=list[str] | None,
            default=typer.Argument(
                None, help="What to look for, quoted or not (omit with --batch)."
            ),
        ),
    ]
    from memcli.config.registry import lookup  # the settings' defaults, shown in --help
    from memcli.search.request_fields import REQUEST_FIELDS

    setting_of = {search_args._attr(f.name): f.setting for f in REQUEST_FIELDS if f.setting}
    for field, kind, names, text in search_args.OPTIONS:
        key = setting_of.get(field)
        if key is not None:  # None means "the setting": say which, and its default
            default_value = lookup(key).default
            shown = ("on" if default_value else "off") if kind == "switch" else default_value
            text += f"  [default: {shown}, the setting {key}]"
        if kind == "switch":
            names = (f"{names[0]}/{names[1]}",)
        default: Any = [] if kind == "list" else (False if kind == "flag" else None)
        annotation = list[str] if kind == "list" else _TYPES.get(kind, str | None)
        option = typer.Option(default, *names, help=text)
        params.append(inspect.Parameter(field, keyword, annotation=annotation, default=option))
    return params


_signature = inspect.Signature(_search_parameters())
search.__signature__ = _signature  # type: ignore[attr-defined]
search.__annotations__ = {p.name: p.annotation for p in _signature.parameters.values()}
app.command(name="search")(search)


@app.command()
def status(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Workspace, index, counts, search mode and files changed since the last index."""
    from memcli.cli.via_engine import engine_answer  # a socket: no heavy imports
    from memcli.operations import NoArgs

    st = state(ctx)
    got = engine_answer(st, "status", NoArgs())
    if got is not None:
        info = got["result"]
    else:
        with st.memory() as mem:
            info = mem.status()
    if as_json:
        st.out.json(info)
    else:
        st.out.warnings(info["warnings"])
        render.status(st.out, info)
        if info.get("git") is not None:
            _hooks_hint(st, info["workspace"])


def _hooks_hint(st: State, workspace: str) -> None:
    """A hint on stderr when the repository has none of memcli's git hooks (a fresh clone
    has none: hooks are not cloned)."""
    from memcli.git.hooks import status as hooks_status  # status in a repository only

    report = hooks_status(Path(workspace))
    if report.hooks and not any(h.state == "installed" for h in report.hooks):
        st.out.info(
            "hint: no git hooks here (a clone has none): 'memcli hooks install' re-indexes"
            " after a commit, merge, checkout or rebase"
        )


@app.command()
def files(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Indexed files with their chunks, source, date and evergreen flag."""
    from memcli.cli.via_engine import engine_answer  # a socket: no heavy imports
    from memcli.operations import NoArgs

    st = state(ctx)
    got = engine_answer(st, "files", NoArgs())
    if got is not None:
        rows, warnings = got["result"], got["warnings"]
    else:
        with st.memory() as mem:
            rows, warnings = mem.files(), list(mem.warnings)
    st.out.warnings(warnings)
    if as_json:
        st.out.json({"files": rows})
    else:
        render.files(st.out, rows)


@app.command()
def get(
    ctx: typer.Context,
    location: str = typer.Argument(
        ...,
        help="a citation: PATH, PATH:LINE (one line), PATH:START-END (as search cites a hit) or"
        " PATH:LINE:COUNT, e.g. memory/2026-11-22.md:12-14",
    ),
    as_json: bool = JSON,
) -> None:
    """Print lines of a memory file (to expand a search hit)."""
    from memcli.cli.via_engine import engine_answer  # a socket: no heavy imports
    from memcli.operations import GetAsk

    st = state(ctx)
    got = engine_answer(st, "get", GetAsk(location, os.getcwd()))
    if got is not None:
        data, lines = got["result"], got["lines"]
    else:
        with st.memory() as mem:
            result = mem.get(location)
        data, lines = (result.as_dict() if as_json else None), result.lines
    if as_json:
        st.out.json(data)
    else:
        for line in lines:
            st.out.line(line)
