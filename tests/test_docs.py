"""Generated docs: completions and the man page are current, complete, and work in real shells.

The committed files must equal what ``python .ci/gendocs.py`` writes from the command
tree as it is now (``make docs`` regenerates them). The completion scripts are run in real
bash, fish and zsh (those that are installed) and asked for candidates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.config import DEFAULTS, env_var
from memcli.errors import ExitCode
from tests.devtools import GENDOCS, load_gendocs

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60


gendocs = load_gendocs()


def _gendocs(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENDOCS), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        cwd=ROOT,
    )


# -- current ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_committed_files_match_the_command_tree(tmp_path: Path) -> None:
    """Regenerate into tmp (another HOME, width and locale) and compare byte for byte."""
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        COLUMNS="37",
        LANG="C",
        NO_COLOR="1",
        MEMCLI_SEARCH_LIMIT="3",
    )
    r = _gendocs("--out", str(tmp_path), env=env)
    assert r.returncode == 0, r.stderr
    for rel in gendocs.OUTPUTS:
        fresh = (tmp_path / rel).read_bytes()
        committed = (ROOT / rel).read_bytes()
        assert fresh == committed, f"{rel} is stale: run 'make docs' and commit it"


@pytest.mark.slow
def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    assert _gendocs("--out", str(tmp_path)).returncode == 0
    assert _gendocs("--check", "--out", str(tmp_path)).returncode == 0
    man = tmp_path / "man/memcli.1"
    man.write_text(man.read_text().replace("EXIT STATUS", "EXIT CODES"))
    r = _gendocs("--check", "--out", str(tmp_path))
    assert r.returncode == 1 and "stale man/memcli.1" in r.stderr
    assert "EXIT CODES" in man.read_text()  # --check writes nothing


def test_generation_is_deterministic() -> None:
    assert gendocs.render_all() == gendocs.render_all()


# -- complete -----------------------------------------------------------------------------------
def test_every_command_and_option_is_in_every_file() -> None:
    tree = gendocs.command_tree()
    files = gendocs.render_all(tree)
    names = {c.name for c in tree.walk()}
    assert {"memcli search", "memcli config set", "memcli doctor", "memcli hooks status"} <= names
    for c in tree.walk():
        for rel, text in files.items():
            if c is not tree:
                word = c.path[-1].replace("-", "\\-") if rel.startswith("man/") else c.path[-1]
                assert word in text, f"{c.name} missing from {rel}"
            for p in c.options:
                for opt in p.all_opts:
                    shown = opt.replace("-", "\\-") if rel.startswith("man/") else opt
                    if rel.endswith(".fish"):
                        shown = f"-l {opt[2:]}" if opt.startswith("--") else f"-s {opt[1:]}"
                    assert shown in text, f"{opt} of {c.name} missing from {rel}"


def test_man_page_documents_exit_codes_environment_files_and_settings() -> None:
    text = (ROOT / "man/memcli.1").read_text()
    for code in ExitCode:
        assert f".TP\n\\fB{int(code)}\\fR\n" in text
    for var in (
        "MEMCLI_WORKSPACE",
        "MEMCLI_CONFIG_DIR",
        "MEMCLI_CACHE_DIR",
        "NO_COLOR",
        "MEMCLI_DEBUG",
    ):
        assert f"\\fB{var}\\fR" in text
    for section, names in DEFAULTS.items():
        for name in names:
            assert f"\\fB{env_var(section + '.' + name)}\\fR" in text
    for heading in (
        "NAME",
        "SYNOPSIS",
        "COMMANDS",
        "CONFIGURATION",
        "ENVIRONMENT",
        "FILES",
        "EXIT STATUS",
        "EXAMPLES",
    ):
        assert f"\n.SH {heading}\n" in text


def test_an_exit_code_without_a_description_stops_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    described = dict(gendocs.EXIT_CODES)
    del described[ExitCode.PROVIDER]
    monkeypatch.setattr(gendocs, "EXIT_CODES", described)
    with pytest.raises(SystemExit, match="PROVIDER"):
        gendocs.man(gendocs.command_tree())


def test_examples_must_use_real_commands_and_options() -> None:
    tree = gendocs.command_tree()
    gendocs.check_examples(tree)  # the shipped ones are fine
    with pytest.raises(SystemExit, match="unknown option --nope"):
        gendocs.check_examples(tree, [("x", "memcli search --nope q")])
    with pytest.raises(SystemExit, match="unknown command 'serch'"):
        gendocs.check_examples(tree, [("x", "memcli serch q")])
    with pytest.raises(SystemExit, match="unknown option --json"):
        gendocs.check_examples(tree, [("x", "memcli hooks --json")])


# -- the man page renders ---------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_without_warnings() -> None:
    r = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(ROOT / "man/memcli.1")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 0 and r.stderr == ""
    shown = subprocess.run(
        ["groff", "-man", "-Tutf8", "-P-cbou", str(ROOT / "man/memcli.1")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    ).stdout
    assert "memcli config set embedding.model openai/nomic-embed-text" in shown
    assert "memcli search --json -n 3 'cache eviction'" in shown  # ASCII quotes and hyphens
    assert "search.limit = 8" in shown


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_dash_l_shows_the_page() -> None:
    r = subprocess.run(
        ["man", "-l", str(ROOT / "man/memcli.1")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"),
    )
    assert r.returncode == 0, r.stderr
    assert "MEMCLI(1)" in r.stdout and "EXIT STATUS" in r.stdout


# -- the completions work ---------------------------------------------------------------------
BASH_HARNESS = r"""
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_memcli
printf '%s\n' "${COMPREPLY[@]}"
"""


def bash_complete(*words: str) -> list[str]:
    r = subprocess.run(
        [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            BASH_HARNESS,
            "bash",
            str(ROOT / "completions/memcli.bash"),
            *words,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]


def test_bash_script_parses() -> None:
    r = subprocess.run(
        ["bash", "-n", str(ROOT / "completions/memcli.bash")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 0, r.stderr


def test_bash_completes_commands_subcommands_options_and_values(tmp_path: Path) -> None:
    top = bash_complete("memcli", "")
    assert {"init", "search", "config", "doctor", "hooks"} <= set(top)
    assert bash_complete("memcli", "hoo") == ["hooks"]
    assert bash_complete("memcli", "hooks", "") == ["install", "uninstall", "status"]
    assert bash_complete("memcli", "-w", "/tmp", "hooks", "st") == ["status"]
    assert bash_complete("memcli", "--workspace", "=", "/tmp", "config") == ["config"]
    assert bash_complete("memcli", "search", "--str") == ["--strategy"]
    assert "--json" in bash_complete("memcli", "config", "--")
    assert bash_complete("memcli", "--ver") == ["--version"]
    # option values: a setting name, nothing for free text
    assert bash_complete("memcli", "config", "get", "search.li") == ["search.limit"]
    assert bash_complete("memcli", "config", "set", "search.limit", "") == []
    assert bash_complete("memcli", "search", "--limit", "") == []
    # a positional argument after an option that takes a value
    assert bash_complete("memcli", "config", "set", "--user", "decay.en") == ["decay.enabled"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_commands_options_and_settings() -> None:
    script = ROOT / "completions/memcli.fish"

    def complete(line: str) -> list[str]:
        r = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C {line!r}"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert r.returncode == 0, r.stderr
        return [row.split("\t")[0] for row in r.stdout.splitlines() if row]

    assert subprocess.run(["fish", "--no-execute", str(script)], timeout=TIMEOUT).returncode == 0
    assert {"search", "doctor", "config"} <= set(complete("memcli "))
    assert set(complete("memcli hooks ")) == {"install", "uninstall", "status"}
    assert set(complete("memcli -w x hooks status --")) == {"--json", "--help"}
    assert set(complete("memcli status --")) == {"--json", "--help"}
    assert complete("memcli config get search.li") == ["search.limit"]
    assert "--strategy" in complete("memcli search --str")


ZSH_SETUP = r"""
PROMPT="<P""S>"$'\n' RPROMPT=''
unsetopt zle_bracketed_paste 2>/dev/null
autoload -U compinit; compinit -u -D
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  local r=$?
  (( $#__hits )) && print -rl -- "<H>"${^__hits}
  return r
}
finish () { print "<E""ND>"; exit }
zle -C finish .complete-word finish
bindkey '^T' finish
bindkey '^I' complete-word
"""

# Types BUFFER and TAB into an interactive zsh on a pseudo-terminal; compadd prints candidates.
ZSH_CAPTURE = r"""
zmodload zsh/zpty || exit 2
zpty z "zsh -f -i"
zpty -w z "fpath=($1 \$fpath); source $2"
zpty -r -m z out '*<PS>*' || exit 3
zpty -n -w z "$3"$'\t'
zpty -n -w z $'\x14'
zpty -r -m z out '*<END>*' || exit 4
for line in ${(f)out}; do
  [[ $line == *'<H>'* ]] && print -r -- ${${line##*<H>}%$'\r'}
done
exit 0
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_commands_options_and_settings(tmp_path: Path) -> None:
    setup = tmp_path / "setup.zsh"
    setup.write_text(ZSH_SETUP)
    capture = tmp_path / "capture.zsh"
    capture.write_text(ZSH_CAPTURE)
    r = subprocess.run(
        ["zsh", "-n", str(ROOT / "completions/_memcli")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 0, r.stderr

    def complete(buffer: str) -> list[str]:
        r = subprocess.run(
            ["zsh", "-f", str(capture), str(ROOT / "completions"), str(setup), buffer],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=dict(os.environ, HOME=str(tmp_path), TERM="xterm"),
        )
        assert r.returncode == 0, (r.returncode, r.stderr)
        return r.stdout.splitlines()

    assert complete("memcli hoo") == ["hooks"]
    assert complete("memcli hooks ") == ["install", "uninstall", "status"]
    assert complete("memcli search --str") == ["--strategy"]
    assert complete("memcli config get search.li") == ["search.limit"]
    assert set(complete("memcli -w /tmp hooks status --")) == {"--json", "--help"}
