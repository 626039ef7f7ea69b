"""Generate shell completions, the man page and the command reference from the command tree.

    python .ci/gendocs.py            # write completions/*, man/memcli.1, docs/reference.md
    python .ci/gendocs.py --check    # exit 1 when a committed file is stale
    python .ci/gendocs.py --out DIR  # write the files under DIR instead

Everything comes from the Typer/Click tree of :data:`memcli.cli.app.app` at generation time
(commands, options, help, value completions), from :class:`memcli.errors.ExitCode` and from
:data:`memcli.config.SETTINGS`, so a new command or option appears after ``make docs``. The
output is deterministic: no dates, no paths of this machine, nothing from the environment.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli import __version__
from memcli.config import ENV_PREFIX, SETTINGS
from memcli.errors import ExitCode

PROG = "memcli"
OUTPUTS = (
    "completions/memcli.bash",
    "completions/_memcli",
    "completions/memcli.fish",
    "man/memcli.1",
    "docs/reference.md",
)
GENERATED = "generated from the command tree by 'make docs' (.ci/gendocs.py); do not edit"

#: What each exit code means (the man page's EXIT STATUS). A new ExitCode member without an
#: entry here stops generation, so the documentation cannot silently fall behind.
EXIT_CODES: dict[ExitCode, str] = {
    ExitCode.SUCCESS: "Success.",
    ExitCode.NOT_FOUND: "Nothing found: search had no result, diff found no change "
    "(like grep(1)); doctor found something that needs attention.",
    ExitCode.USAGE: "Usage error or bad input (unknown option, invalid setting, path outside "
    "the workspace).",
    ExitCode.WORKSPACE: "Workspace, index, lock or git problem (no workspace found, index "
    "cannot be opened, another writer holds the lock, git failed).",
    ExitCode.PROVIDER: "The embedding or LLM provider failed where the command cannot fall "
    "back (for example flush when the model is down).",
    ExitCode.INTERRUPTED: "Interrupted (Ctrl-C).",
}

ENVIRONMENT: list[tuple[str, str]] = [
    (
        "MEMCLI_WORKSPACE",
        "The workspace folder when -w/--workspace is not given; otherwise "
        "memcli looks for the nearest folder upwards that holds memory/ or memcli.toml.",
    ),
    (
        "MEMCLI_CONFIG_DIR",
        "Folder of the user config.toml (default: the platform's user config "
        "folder, ~/.config/memcli on Linux).",
    ),
    (
        "MEMCLI_CACHE_DIR",
        "Folder of the embedding cache embeddings.db (default: the platform's "
        "user cache folder, ~/.cache/memcli on Linux).",
    ),
    (
        f"{ENV_PREFIX}<SECTION>_<KEY>",
        "Overrides one setting, for example "
        "MEMCLI_EMBEDDING_MODEL or MEMCLI_SEARCH_LIMIT; see CONFIGURATION for every name. "
        "Booleans take 1/0, true/false, yes/no, on/off; lists are comma-separated.",
    ),
    (
        "NO_COLOR",
        "When set to a non-empty value, no colour or text styles on stdout or "
        "stderr, like --no-color.",
    ),
    ("MEMCLI_DEBUG", "Set to 1 to print a traceback on errors, like --debug."),
    (
        "OPENAI_API_KEY, ...",
        "API keys are read from the provider's usual variables (LiteLLM "
        "names them), or from the variable named by embedding.api_key_env or llm.api_key_env. "
        "memcli never stores keys in its config files.",
    ),
]

FILES: list[tuple[str, str]] = [
    (
        "memory/",
        "The memories: Markdown files, the source of truth. memory/MEMORY.md is "
        "evergreen; memory/YYYY-MM-DD.md are daily logs that add and flush append to; "
        "memory/NAME/ is the namespace NAME.",
    ),
    ("memcli.toml", "Workspace settings, meant to be committed (never secrets)."),
    (".memignore", "Paths to leave out of the index (gitignore syntax)."),
    (
        ".memcli/index.db",
        "The SQLite index (FTS5, optional sqlite-vec vectors). Derived: "
        "deleting .memcli/ loses nothing, the next command rebuilds it.",
    ),
    (".memcli/lock", "The writer lock."),
    ("$MEMCLI_CONFIG_DIR/config.toml", "User settings (see MEMCLI_CONFIG_DIR)."),
    (
        "$MEMCLI_CACHE_DIR/embeddings.db",
        "Embedding cache shared by all workspaces, keyed by "
        "model and text hash (see MEMCLI_CACHE_DIR).",
    ),
]

#: (description, command line). Checked against the command tree at generation time.
EXAMPLES: list[tuple[str, str]] = [
    (
        "Set up a workspace in a git repository, with hooks that re-index after each commit:",
        "memcli init --git --hooks",
    ),
    (
        "Remember a decision, tagged:",
        "memcli add --type decision --tag infra 'Use Valkey instead of Redis for the cache.'",
    ),
    (
        "Search, for a person and for a program:",
        "memcli search 'cache eviction'\nmemcli search --json -n 3 'cache eviction'",
    ),
    (
        "A Markdown block with path:line citations to paste into a prompt:",
        "memcli search --format context --max-tokens 800 'deploy steps'",
    ),
    ("Open the lines behind a hit:", "memcli get memory/2026-11-22.md:12:3"),
    ("What was learned this week:", "memcli diff --since '1 week ago'"),
    (
        "Turn on hybrid search with a local OpenAI-compatible server:",
        "memcli config set embedding.model openai/nomic-embed-text\n"
        "memcli config set embedding.api_base http://127.0.0.1:11434/v1\n"
        "memcli index",
    ),
    ("Check the installation and the workspace:", "memcli doctor"),
]

SEE_ALSO = "git(1), sqlite3(1), grep(1)"


# -- the command tree ---------------------------------------------------------------------
@dataclass
class Param:
    """One option or argument, as the generators need it."""

    name: str
    is_option: bool
    opts: list[str]  # option names (["-n", "--limit"]) or [] for an argument
    secondary: list[str]  # negative flags (["--no-decay"])
    takes_value: bool
    multiple: bool
    required: bool
    metavar: str
    help: str
    values: list[str] = field(default_factory=list)  # static completions
    kind: str = ""  # "file", "dir", "values" or "" (free text)
    eager: bool = False  # --help, --version: nothing else makes sense after them

    @property
    def all_opts(self) -> list[str]:
        return self.opts + self.secondary

    @property
    def label(self) -> str:
        """``-n, --limit N`` / ``--decay, --no-decay`` / ``QUERY``."""
        if not self.is_option:
            return self.metavar
        text = ", ".join(self.all_opts)
        return f"{text} {self.metavar}" if self.takes_value else text


@dataclass
class Command:
    path: tuple[str, ...]
    help: str
    usage: str
    params: list[Param]
    commands: list[Command] = field(default_factory=list)
    runs_alone: bool = False  # a group that also does something without a subcommand

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def summary(self) -> str:
        return first_paragraph(self.help)

    @property
    def options(self) -> list[Param]:
        return [p for p in self.params if p.is_option]

    @property
    def arguments(self) -> list[Param]:
        return [p for p in self.params if not p.is_option]

    def walk(self) -> Iterable[Command]:
        yield self
        for sub in self.commands:
            yield from sub.walk()

    def find(self, words: list[str]) -> Command | None:
        """The subcommand named by ``words`` (None when there is no such command)."""
        node: Command = self
        for word in words:
            match = next((c for c in node.commands if c.path[-1] == word), None)
            if match is None:
                return None
            node = match
        return node


def first_paragraph(text: str) -> str:
    para = " ".join(text.strip().split("\n\n")[0].split()) if text else ""
    return para.replace("\b", "").strip()


def _metavar(param: Any, ctx: Any) -> str:
    explicit = getattr(param, "metavar", None)
    if explicit:
        return str(explicit)
    ptype = param.type
    choices = getattr(ptype, "choices", None)
    if choices:
        return "{" + "|".join(str(c) for c in choices) + "}"
    kind = getattr(ptype, "name", "")
    if hasattr(ptype, "dir_okay"):
        text = (
            "DIR"
            if ptype.dir_okay and not ptype.file_okay
            else ("FILE" if ptype.file_okay and not ptype.dir_okay else "PATH")
        )
    elif kind in ("int", "integer"):
        text = "N"
    elif kind == "float":
        text = "NUM"
    elif param.param_type_name == "option":
        longs = [o for o in param.opts if o.startswith("--")]
        text = (longs[0] if longs else param.opts[0]).lstrip("-").upper().replace("-", "_")
    else:
        text = (param.name or "ARG").upper()
    if param.param_type_name == "argument":
        if param.nargs == -1:
            text = f"{text}..."
        if not param.required:
            text = f"[{text}]"
    return text


def _completions(param: Any, ctx: Any) -> tuple[str, list[str]]:
    """("values", [...]) / ("file", []) / ("dir", []) / ("", []) for one parameter."""
    ptype = param.type
    choices = getattr(ptype, "choices", None)
    if choices:
        return "values", [str(c) for c in choices]
    if getattr(param, "_custom_shell_complete", None) is not None:
        items = param.shell_complete(ctx, "")
        values = [str(getattr(i, "value", i)) for i in items]
        kinds = {getattr(i, "type", "plain") for i in items}
        if "dir" in kinds:
            return "dir", []
        if "file" in kinds:
            return "file", []
        return ("values", values) if values else ("", [])
    if hasattr(ptype, "dir_okay"):
        return ("dir" if ptype.dir_okay and not ptype.file_okay else "file"), []
    return "", []


def _param(p: Any, ctx: Any, help_names: set[str]) -> Param:
    is_option = p.param_type_name == "option"
    is_help = is_option and set(p.opts) <= help_names
    if is_option:
        record = p.get_help_record(ctx)
        text = record[1] if record else ""
        takes_value = not (p.is_flag or p.count)
        # short names first, then long ones: "-n, --limit"
        opts = sorted(p.opts, key=lambda o: (o.startswith("--"), o))
    else:
        text = getattr(p, "help", None) or ""
        takes_value = True
        opts = []
    kind, values = _completions(p, ctx) if takes_value else ("", [])
    return Param(
        name=p.name or "",
        is_option=is_option,
        opts=opts,
        secondary=list(getattr(p, "secondary_opts", []) or []),
        takes_value=takes_value,
        multiple=bool(getattr(p, "multiple", False)) or p.nargs == -1,
        required=bool(p.required),
        metavar=_metavar(p, ctx) if takes_value else "",
        help=" ".join(text.split()),
        values=values,
        kind=kind,
        eager=bool(p.is_eager) and is_option and (is_help or p.name == "version"),
    )


def command_tree(app: Any = None) -> Command:
    """The memcli command tree (the real Typer app unless ``app`` is given)."""
    import typer.main

    if app is None:
        from memcli.cli.app import app
    root = typer.main.get_command(app)
    return _node(root, (PROG,), None)


def _node(cmd: Any, path: tuple[str, ...], parent_ctx: Any) -> Command:
    ctx = cmd.context_class(cmd, info_name=path[-1], parent=parent_ctx, **cmd.context_settings)
    help_names = set(cmd.get_help_option_names(ctx))
    params = []
    for p in cmd.get_params(ctx):
        if getattr(p, "hidden", False):
            continue
        param = _param(p, ctx, help_names)
        if param.is_option and set(param.opts) <= help_names:
            param.opts = sorted(help_names, key=lambda o: (o.startswith("--"), o))
        params.append(param)
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    node = Command(
        path,
        (cmd.help or "").strip(),
        usage,
        params,
        runs_alone=bool(getattr(cmd, "invoke_without_command", False)),
    )
    if hasattr(cmd, "commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            node.commands.append(_node(sub, (*path, name), ctx))
    return node


def check_examples(tree: Command, examples: list[tuple[str, str]] | None = None) -> None:
    """Every example names a real command and real options (generation fails otherwise)."""
    import shlex

    for _, lines in EXAMPLES if examples is None else examples:
        for line in lines.splitlines():
            words = shlex.split(line)
            if words[0] != PROG:
                raise SystemExit(f"example does not start with {PROG}: {line}")
            node: Command = tree
            for word in words[1:]:
                if word.startswith("-"):
                    name = word.split("=", 1)[0]
                    known = {o for p in node.options for o in p.all_opts}
                    if name not in known:
                        raise SystemExit(
                            f"example uses unknown option {name} of '{node.name}': {line}"
                        )
                    continue
                sub = node.find([word])
                if sub is not None:
                    node = sub
                elif node.commands:
                    raise SystemExit(f"example uses unknown command {word!r}: {line}")


# -- bash ---------------------------------------------------------------------------------
_WORD = re.compile(r"^[A-Za-z0-9_.,:/@%+=-]+$")


def _word(value: str) -> str:
    if not _WORD.match(value):
        raise SystemExit(f"cannot complete the value {value!r} (spaces or shell characters)")
    return value


def _bash_value_action(param: Param) -> str:
    if param.kind == "file":
        return 'compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))'
    if param.kind == "dir":
        return 'compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur"))'
    if param.kind == "values":
        words = " ".join(_word(v) for v in param.values)
        return f'COMPREPLY=($(compgen -W "{words}" -- "$cur"))'
    return ":"


def bash(tree: Command) -> str:
    nodes = list(tree.walk())
    skip = [f"'{c.name} {o}'" for c in nodes for p in c.options if p.takes_value for o in p.opts]
    subs = [f"'{c.name} {s.path[-1]}'" for c in nodes for s in c.commands]
    out = [
        f"# bash completion for {PROG}: {GENERATED}.",
        f"# Install: copy to ~/.local/share/bash-completion/completions/{PROG}",
        f"# or add 'source /path/to/{PROG}.bash' to ~/.bashrc.",
        "",
        f"_{PROG}() {{",
        '    local cur prev cmd=memcli skip=0 pos=0 i w opts="" subs=""',
        '    cur="${COMP_WORDS[COMP_CWORD]}"',
        '    prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    # --opt=value arrives as '--opt' '=' 'value' (COMP_WORDBREAKS)",
        '    if [[ $cur == "=" ]]; then',
        '        cur=""',
        '    elif [[ $prev == "=" ]]; then',
        '        prev="${COMP_WORDS[COMP_CWORD-2]}"',
        "    fi",
        "    # find the command typed so far and how many arguments it has",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        w="${COMP_WORDS[i]}"',
        '        if [[ $w == "=" ]]; then skip=1; continue; fi',
        "        if ((skip)); then skip=0; continue; fi",
        '        case "$cmd $w" in',
    ]
    if skip:
        out.append(f"            {_bash_alts(skip)}) skip=1 ;;")
    if subs:
        out.append(f'            {_bash_alts(subs)}) cmd="$cmd $w"; pos=0 ;;')
    out += [
        "            *) [[ $w == -* ]] || pos=$((pos + 1)) ;;",
        "        esac",
        "    done",
        "",
        "    # the value of an option",
        '    if [[ ${COMP_WORDS[COMP_CWORD]} == "=" || $cur != -* ]]; then',
        '        case "$cmd $prev" in',
    ]
    free: list[str] = []
    for c in nodes:
        for p in c.options:
            if not p.takes_value:
                continue
            pats = [f"'{c.name} {o}'" for o in p.opts]
            action = _bash_value_action(p)
            if action == ":":
                free += pats
            else:
                out.append(f"            {_bash_alts(pats)}) {action}; return ;;")
    if free:
        out.append(f"            {_bash_alts(free)}) return ;;")
    out += ["        esac", "    fi", ""]
    out.append('    case "$cmd" in')
    for c in nodes:
        words = [o for p in c.options for o in p.all_opts]
        line = f"        '{c.name}') opts=\"{' '.join(words)}\""
        if c.commands:
            line += f'; subs="{" ".join(s.path[-1] for s in c.commands)}"'
        out.append(line + " ;;")
    out += [
        "    esac",
        "    if [[ $cur == -* ]]; then",
        '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "        return",
        "    elif [[ -n $subs ]]; then",
        '        COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
        "        return",
        "    fi",
        "    # a positional argument",
        '    case "$cmd $pos" in',
    ]
    for c in nodes:
        for i, arg in enumerate(c.arguments):
            action = _bash_value_action(arg)
            if action == ":":
                continue
            pat = f"'{c.name} '*" if arg.multiple else f"'{c.name} {i}'"
            out.append(f"        {pat}) {action} ;;")
    out += [
        "    esac",
        "}",
        "",
        f"complete -F _{PROG} {PROG}",
        "",
    ]
    return "\n".join(out)


def _bash_alts(patterns: list[str]) -> str:
    """``'a'|'b'|...`` wrapped over several lines."""
    lines, line = [], ""
    for pat in patterns:
        piece = pat if not line else f"|{pat}"
        if line and len(line) + len(piece) > 84:
            lines.append(line + "|\\")
            line = pat
        else:
            line += piece
    lines.append(line)
    return ("\n" + " " * 12).join(lines)


# -- zsh ----------------------------------------------------------------------------------
def _zq(text: str) -> str:
    """Single-quote for zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def _zdesc(text: str) -> str:
    """A description inside ``[...]`` of an _arguments spec."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _zmsg(text: str) -> str:
    return text.replace(":", "\\:") or "value"


def _zaction(param: Param) -> str:
    if param.kind == "file":
        return "_files"
    if param.kind == "dir":
        return "_files -/"
    if param.kind == "values":
        return "(" + " ".join(_word(v) for v in param.values) + ")"
    return " "


def _zsh_option_specs(c: Command) -> list[str]:
    specs = []
    for p in c.options:
        names = p.all_opts
        if p.eager:
            exclusion = "(- *)"
        elif p.multiple:
            exclusion = "*"
        elif len(names) > 1:
            exclusion = "(" + " ".join(names) + ")"
        else:
            exclusion = ""
        for name in names:
            spec = name
            if p.takes_value:
                spec += "+" if not name.startswith("--") else "="
            spec += f"[{_zdesc(p.help or p.name)}]"
            if p.takes_value:
                spec += f":{_zmsg(p.metavar)}:{_zaction(p)}"
            specs.append(_zq(exclusion + spec))
    return specs


def _zfunc(c: Command) -> str:
    return "_" + "_".join(c.path).replace("-", "_")


def zsh(tree: Command) -> str:
    out = [
        f"#compdef {PROG}",
        f"# zsh completion for {PROG}: {GENERATED}.",
        f"# Install: copy to a folder in $fpath as _{PROG} (e.g. ~/.zfunc/_{PROG} with",
        "# 'fpath=(~/.zfunc $fpath)' before 'compinit' in ~/.zshrc), or source it after compinit.",
        "",
    ]
    for c in tree.walk():
        out.append(f"{_zfunc(c)}() {{")
        specs = _zsh_option_specs(c)
        if c.commands:
            out.append('    local curcontext="$curcontext" state line ret=1')
            out.append("    typeset -A opt_args")
            specs += [_zq(f"1: :{_zfunc(c)}_commands"), _zq("*:: :->command")]
            out.append("    _arguments -C -s -S \\")
        else:
            for i, arg in enumerate(c.arguments, 1):
                pos = "*" if arg.multiple else str(i)
                opt = ":" if not arg.required and not arg.multiple else ""
                specs.append(_zq(f"{pos}:{opt}{_zmsg(arg.metavar.strip('[]'))}:{_zaction(arg)}"))
            out.append("    _arguments -s -S \\")
        out += [f"        {s} \\" for s in specs[:-1]]
        out.append(f"        {specs[-1]}" + (" && ret=0" if c.commands else ""))
        if c.commands:
            out += [
                "    case $state in",
                "        command)",
                f'            curcontext="${{curcontext%:*:*}}:{"-".join(c.path)}-$words[1]:"',
                "            case $words[1] in",
            ]
            for sub in c.commands:
                out.append(f"                ({sub.path[-1]}) {_zfunc(sub)} && ret=0 ;;")
            out += ["            esac", "            ;;", "    esac", "    return ret"]
        out += ["}", ""]
        if c.commands:
            out.append(f"{_zfunc(c)}_commands() {{")
            out.append("    local -a commands")
            out.append("    commands=(")
            for sub in c.commands:
                out.append(f"        {_zq(sub.path[-1] + ':' + sub.summary)}")
            out.append("    )")
            out.append(f"    _describe -t commands {_zq(c.name + ' command')} commands")
            out += ["}", ""]
    out += [
        f'if [[ "$funcstack[1]" == "_{PROG}" ]]; then',
        f'    _{PROG} "$@"',
        "else",
        f"    compdef _{PROG} {PROG}",
        "fi",
        "",
    ]
    return "\n".join(out)


# -- fish ---------------------------------------------------------------------------------
def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(tree: Command) -> str:
    nodes = list(tree.walk())
    skip = [f"{c.name} {o}" for c in nodes for p in c.options if p.takes_value for o in p.opts]
    subs = [f"{c.name} {s.path[-1]}" for c in nodes for s in c.commands]
    out = [
        f"# fish completion for {PROG}: {GENERATED}.",
        f"# Install: copy to ~/.config/fish/completions/{PROG}.fish",
        "",
        f"function __{PROG}_command --description 'The {PROG} (sub)command being typed'",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        f"    set -l path {PROG}",
        "    set -l skip 0",
        "    for token in $tokens",
        "        if test $skip -eq 1",
        "            set skip 0",
        "            continue",
        "        end",
        '        switch "$path $token"',
    ]
    if skip:
        out.append("            case " + _fish_wrap(skip))
        out.append("                set skip 1")
    if subs:
        out.append("            case " + _fish_wrap(subs))
        out.append('                set path "$path $token"')
    out += [
        "        end",
        "    end",
        "    echo $path",
        "end",
        "",
        f"function __{PROG}_is --description 'Whether the command being typed is argv'",
        f'    test (__{PROG}_command) = "$argv"',
        "end",
        "",
        f"complete -c {PROG} -f",
    ]
    for c in nodes:
        cond = f"-n {_fq(f'__{PROG}_is {c.name}')}"
        out.append("")
        out.append(f"# {c.name}")
        for sub in c.commands:
            out.append(f"complete -c {PROG} {cond} -a {sub.path[-1]} -d {_fq(sub.summary)}")
        for p in c.options:
            flags = []
            for o in p.all_opts:
                if o.startswith("--"):
                    flags.append(f"-l {o[2:]}")
                elif len(o) == 2:
                    flags.append(f"-s {o[1]}")
                else:
                    flags.append(f"-o {o[1:]}")
            if p.takes_value:
                flags.append(_fish_value(p))
            out.append(f"complete -c {PROG} {cond} {' '.join(flags)} -d {_fq(p.help or p.name)}")
        for arg in c.arguments:
            if arg.kind in ("file", "dir"):
                out.append(f"complete -c {PROG} {cond} -F")
            elif arg.kind == "values":
                out.append(f"complete -c {PROG} {cond} -a {_fq(' '.join(arg.values))}")
    out.append("")
    return "\n".join(out)


def _fish_value(p: Param) -> str:
    if p.kind in ("file", "dir"):
        return "-r -F"
    if p.kind == "values":
        return f"-x -a {_fq(' '.join(p.values))}"
    return "-x"


def _fish_wrap(patterns: list[str]) -> str:
    quoted = [_fq(p) for p in patterns]
    lines, line = [], ""
    for q in quoted:
        piece = q if not line else f" {q}"
        if line and len(line) + len(piece) > 80:
            lines.append(line + " \\")
            line = q
        else:
            line += piece
    lines.append(line)
    return ("\n" + " " * 17).join(lines)


# -- man page -----------------------------------------------------------------------------
def roff(text: str) -> str:
    """Escape running text for roff (backslashes, hyphens, control characters, non-ASCII)."""
    text = text.replace("\\", "\\e").replace("-", "\\-").replace("'", "\\(aq")
    text = text.replace("`", "\\(ga")
    text = "".join(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]" for ch in text)
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _arg(text: str) -> str:
    """A quoted macro argument."""
    return '"' + roff(text).replace('"', "\\(dq") + '"'


def _paragraphs(text: str) -> list[str]:
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        para = para.replace("\b", "").strip("\n")
        if para.strip():
            out.append(para)
    return out


def _usage(c: Any) -> str:
    """What follows a command's name in its synopsis: its arguments, or its sub-commands."""
    if not c.commands:
        return " ".join(a.metavar for a in c.arguments)
    has_options = any(not p.eager for p in c.options)
    return ("[OPTIONS] " if has_options else "") + ("[COMMAND]" if c.runs_alone else "COMMAND")


def _help_block(text: str) -> list[str]:
    lines: list[str] = []
    for i, para in enumerate(_paragraphs(text)):
        if i:
            lines.append(".PP")
        if any(ln.startswith("  ") for ln in para.splitlines()):
            lines += [".nf", roff(textwrap.dedent(para)), ".fi"]
        else:
            lines.append(roff(" ".join(para.split())))
    return lines


def _bold_opts(p: Param) -> str:
    """``.TP`` tag line: option names in bold, the value placeholder in italics."""
    if not p.is_option:
        return f"\\fI{roff(p.metavar)}\\fR"
    names = ", ".join(f"\\fB{roff(o)}\\fR" for o in p.all_opts)
    return f"{names} \\fI{roff(p.metavar)}\\fR" if p.takes_value else names


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def man(tree: Command) -> str:
    missing = [c.name for c in ExitCode if c not in EXIT_CODES]
    if missing:
        raise SystemExit(f"gendocs: no description for exit code(s) {', '.join(missing)}")
    check_examples(tree)
    out = [
        f'.\\" Man page for {PROG}: {GENERATED}.',
        f'.TH MEMCLI 1 "" {_arg(f"{PROG} {__version__}")} "User Commands"',
        ".nh",
        ".ad l",
        ".SH NAME",
        f"{PROG} \\- {roff(_lower_first(first_paragraph(tree.help).rstrip('.')))}",
        ".SH SYNOPSIS",
        f"\\fB{PROG}\\fR [\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] "
        "[\\fIARGUMENTS\\fR]",
        ".SH DESCRIPTION",
        *_help_block(tree.help),
        ".PP",
        roff(
            "The Markdown under memory/ is the source of truth: every memory is a file you can "
            "open, grep, edit and review with git. The SQLite index beside it (.memcli/) is a "
            "derived, rebuildable cache: keyword search (FTS5 BM25) works offline with no set-up; "
            "setting embedding.model adds vector search (hybrid)."
        ),
        ".SH GLOBAL OPTIONS",
        roff("Global options go before the command name."),
    ]
    for p in tree.options:
        out += [".TP", _bold_opts(p), roff(p.help)]
    out += [".SH COMMANDS"]
    for c in tree.walk():
        if c is tree:
            continue
        usage = _usage(c)
        heading = " ".join(c.path[1:]) + (f" {usage}" if usage else "")
        out.append(f".SS {_arg(heading)}")
        out += _help_block(c.help)
        shown = [p for p in c.params if not (p.eager and set(p.opts) & {"-h", "--help"})]
        for p in shown:
            out += [".TP", _bold_opts(p), roff(p.help or "")]
        if c.commands:
            names = ", ".join(f"\\fB{roff(s.path[-1])}\\fR" for s in c.commands)
            out += [".PP", f"Subcommands: {names}."]
    out += [
        ".SH OUTPUT",
        roff(
            "stdout carries data only; warnings, errors and progress go to stderr. On a "
            "terminal, tables are drawn with colour; when stdout is a pipe or a file they are "
            "plain tab-separated lines with a header, with no escape codes. Progress bars appear "
            "only when stderr is a terminal. --json prints one JSON document (search --jsonl and "
            "watch --json: one per line) whose field names are stable and documented in "
            "docs/json.md; an empty result is still valid JSON. Paths are relative to the "
            "workspace, with forward slashes. -q hides warnings and progress; errors are always "
            "one line on stderr, starting with 'Error:', followed by a 'Hint:' line when there "
            "is one."
        ),
        ".SH CONFIGURATION",
        roff(
            "Settings are read in layers, later ones win: built-in defaults, the user config.toml, "
            "the workspace memcli.toml, environment variables, command-line options. "
            "'memcli config' shows every value with its origin. The settings, their defaults "
            "and environment variables:"
        ),
    ]
    for setting in SETTINGS:
        text = setting.help
        if setting.bounded:
            text += f" Allowed: {setting.allowed()}."
        out += [
            ".TP",
            f"\\fB{roff(setting.section)}.{roff(setting.name)}\\fR = "
            f"{roff(_toml(setting.default))}",
            roff(f"{text} " if text else "") + f"(\\fB{roff(setting.env)}\\fR)",
        ]
    out.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        out += [".TP", f"\\fB{roff(name)}\\fR", roff(text)]
    out.append(".SH FILES")
    for name, text in FILES:
        out += [".TP", f"\\fI{roff(name)}\\fR", roff(text)]
    out.append(".SH EXIT STATUS")
    for code in ExitCode:
        out += [".TP", f"\\fB{int(code)}\\fR", roff(EXIT_CODES[code])]
    out.append(".SH EXAMPLES")
    for text, lines in EXAMPLES:
        out += [".PP", roff(text), ".PP", ".RS 4", ".nf", roff(lines), ".fi", ".RE"]
    out += [".SH SEE ALSO", roff(SEE_ALSO), ""]
    return "\n".join(out)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


# -- the command reference (Markdown, docs/reference.md) ------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def md(text: str) -> str:
    """``text`` as Markdown prose: every character Markdown would read as markup escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _md_help(text: str) -> list[str]:
    """Help paragraphs: prose joined into one line, indented examples as a code block."""
    out: list[str] = []
    for para in _paragraphs(text):
        if any(ln.startswith("  ") for ln in para.splitlines()):
            out += ["```text", textwrap.dedent(para).rstrip(), "```", ""]
        else:
            out += [md(para), ""]
    return out


def _md_param(p: Param) -> str:
    text = md(p.help or "")
    return f"- `{p.label}`" + (f": {text}" if text else "")


def reference(tree: Command) -> str:
    check_examples(tree)
    out = [
        f"<!-- {GENERATED} -->",
        "",
        "# Command reference",
        "",
        md(first_paragraph(tree.help)),
        "",
        "Every command, option, setting, environment variable and exit code, generated from the "
        "command tree by `make docs` (`.ci/gendocs.py`) like the man page (`man -l man/memcli.1`); "
        "a test fails when this page is stale. Each command also has `--help`.",
        "",
        "## Global options",
        "",
        "Global options go before the command name.",
        "",
        *(_md_param(p) for p in tree.options),
        "",
        "## Commands",
        "",
    ]
    for c in tree.walk():
        if c is tree:
            continue
        usage = _usage(c)
        out += [f"### {c.name}", "", "```text", f"{c.name}" + (f" {usage}" if usage else ""), "```"]
        out += ["", *_md_help(c.help)]
        shown = [p for p in c.params if not (p.eager and set(p.opts) & {"-h", "--help"})]
        if shown:
            out += [_md_param(p) for p in shown] + [""]
        if c.commands:
            names = ", ".join(f"`{s.path[-1]}`" for s in c.commands)
            out += [f"Subcommands: {names}.", ""]
    out += [
        "## Settings",
        "",
        "Read in layers, later ones win: built-in defaults, the user `config.toml`, the "
        "workspace `memcli.toml`, environment variables, command-line options "
        "([configuration](configuration.md)).",
        "",
        "| setting | default | environment | meaning |",
        "|---|---|---|---|",
    ]
    for setting in SETTINGS:
        text = setting.help
        if setting.bounded:
            text += f" Allowed: {setting.allowed()}."
        out.append(
            f"| `{setting.section}.{setting.name}` | `{_toml(setting.default)}` "
            f"| `{setting.env}` | {md(text)} |"
        )
    out += ["", "## Environment", ""]
    out += [f"- `{name}`: {md(text)}" for name, text in ENVIRONMENT]
    out += ["", "## Files", ""]
    out += [f"- `{name}`: {md(text)}" for name, text in FILES]
    out += ["", "## Exit status", ""]
    out += [f"- `{int(code)}`: {md(EXIT_CODES[code])}" for code in ExitCode]
    out += ["", "## Examples", ""]
    for text, lines in EXAMPLES:
        out += [md(text), "", "```sh", lines, "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


# -- driver -------------------------------------------------------------------------------
GENERATORS: dict[str, Callable[[Command], str]] = {
    "completions/memcli.bash": bash,
    "completions/_memcli": zsh,
    "completions/memcli.fish": fish,
    "man/memcli.1": man,
    "docs/reference.md": reference,
}


def render_all(tree: Command | None = None) -> dict[str, str]:
    """Every generated file: relative path -> text."""
    tree = tree or command_tree()
    return {rel: GENERATORS[rel](tree) for rel in OUTPUTS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python .ci/gendocs.py",
        description="Generate completions/, man/memcli.1 and docs/reference.md from the memcli "
        "command tree.",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="folder to write into (default: the source checkout)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when a file differs from what it would be",
    )
    parser.add_argument(
        "--only", choices=["completions", "man", "docs"], help="generate only these"
    )
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = Path(__file__).resolve().parents[1]
        if not (args.out / "pyproject.toml").is_file():
            parser.error(f"{args.out} is not a source checkout; pass --out DIR")
    files = render_all()
    if args.only:
        files = {k: v for k, v in files.items() if k.startswith(args.only)}
    stale = []
    for rel, text in files.items():
        target = args.out / rel
        data = text.encode("utf-8")
        current = target.read_bytes() if target.exists() else None
        if current == data:
            continue
        stale.append(rel)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for rel in stale:
        print(f"{'stale' if args.check else 'wrote'} {rel}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
