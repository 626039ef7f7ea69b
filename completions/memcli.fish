# fish completion for memcli: generated from the command tree by 'make docs' (.ci/gendocs.py); do not edit.
# Install: copy to ~/.config/fish/completions/memcli.fish

function __memcli_command --description 'The memcli (sub)command being typed'
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path memcli
    set -l skip 0
    for token in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch "$path $token"
            case 'memcli -w' 'memcli --workspace' 'memcli init --local-model' \
                 'memcli init --model-path' 'memcli add --to' 'memcli add --ns' 'memcli add -t' \
                 'memcli add --type' 'memcli add --tag' 'memcli add --tags' \
                 'memcli add --expires' 'memcli search -n' 'memcli search --limit' \
                 'memcli search --min-score' 'memcli search --source' 'memcli search --type' \
                 'memcli search --tag' 'memcli search --tags' 'memcli search --since' \
                 'memcli search --until' 'memcli search --path' 'memcli search --strategy' \
                 'memcli search --mmr-lambda' 'memcli search --format' \
                 'memcli search --max-tokens' 'memcli supersede -t' 'memcli supersede --type' \
                 'memcli supersede --tag' 'memcli supersede --tags' 'memcli forget --reason' \
                 'memcli confirm --by' 'memcli watch --debounce' 'memcli flush --ns' \
                 'memcli flush --prompt-file' 'memcli diff --since' 'memcli log -n' \
                 'memcli log --limit' 'memcli log --since' 'memcli sync --strategy' \
                 'memcli serve --idle-timeout' 'memcli doctor --timeout' \
                 'memcli agent install --scope' 'memcli agent install --project' \
                 'memcli agent uninstall --scope' 'memcli agent uninstall --project' \
                 'memcli agent status --project' 'memcli agent flush-session --session-id' \
                 'memcli agent flush-session --transcript' 'memcli agent flush-session --event' \
                 'memcli agent import --agent' 'memcli agent import --days' \
                 'memcli agent import --max-sessions'
                set skip 1
            case 'memcli init' 'memcli add' 'memcli index' 'memcli search' 'memcli status' \
                 'memcli files' 'memcli get' 'memcli supersede' 'memcli forget' 'memcli confirm' \
                 'memcli review' 'memcli watch' 'memcli flush' 'memcli diff' 'memcli log' \
                 'memcli sync' 'memcli mcp' 'memcli serve' 'memcli trust' 'memcli doctor' \
                 'memcli hooks' 'memcli agent' 'memcli config' 'memcli hooks install' \
                 'memcli hooks uninstall' 'memcli hooks status' 'memcli agent install' \
                 'memcli agent uninstall' 'memcli agent status' 'memcli agent hook' \
                 'memcli agent flush-session' 'memcli agent import' 'memcli config get' \
                 'memcli config set' 'memcli config unset' 'memcli config path'
                set path "$path $token"
        end
    end
    echo $path
end

function __memcli_is --description 'Whether the command being typed is argv'
    test (__memcli_command) = "$argv"
end

complete -c memcli -f

# memcli
complete -c memcli -n '__memcli_is memcli' -a init -d 'Create memory/, MEMORY.md, .gitignore and (in git) .gitattributes; idempotent.'
complete -c memcli -n '__memcli_is memcli' -a add -d 'Append a fact as \'- HH:MM [type] text #tags\' and index the file.'
complete -c memcli -n '__memcli_is memcli' -a index -d 'Bring the index in line with the Markdown (incremental).'
complete -c memcli -n '__memcli_is memcli' -a search -d 'Search memory (BM25 keyword search; hybrid when an embedding model is set).'
complete -c memcli -n '__memcli_is memcli' -a status -d 'Workspace, index, counts, search mode and files changed since the last index.'
complete -c memcli -n '__memcli_is memcli' -a files -d 'Indexed files with their chunks, source, date and evergreen flag.'
complete -c memcli -n '__memcli_is memcli' -a get -d 'Print lines of a memory file (to expand a search hit).'
complete -c memcli -n '__memcli_is memcli' -a supersede -d 'Replace a fact: write the new one and mark the old one superseded by it.'
complete -c memcli -n '__memcli_is memcli' -a forget -d 'Retract a fact: searches leave it out from now on; it stays in the file, marked.'
complete -c memcli -n '__memcli_is memcli' -a confirm -d 'Vouch for a fact: it ranks higher, and a review of it is closed.'
complete -c memcli -n '__memcli_is memcli' -a review -d 'Facts that need a decision (conflicts, instruction-like, expired), with the commands that settle them. Exit 1 when there are none.'
complete -c memcli -n '__memcli_is memcli' -a watch -d 'Re-index memory files as they change, until Ctrl-C (one watcher per workspace).'
complete -c memcli -n '__memcli_is memcli' -a flush -d 'Extract durable facts from a conversation (LLM), skip known ones, append the rest.'
complete -c memcli -n '__memcli_is memcli' -a diff -d 'Facts added and removed under memory/ (exit 1 when nothing changed).'
complete -c memcli -n '__memcli_is memcli' -a log -d 'Commits that touched memory/, with the number of facts each added and removed.'
complete -c memcli -n '__memcli_is memcli' -a sync -d 'Share memory through the upstream remote: commit memory, pull, re-index, push.'
complete -c memcli -n '__memcli_is memcli' -a mcp -d 'Serve memory to an MCP client over stdio (tools: search, context, get, add, flush, status). Needs the extra: pip install \'memcli[mcp]\'.'
complete -c memcli -n '__memcli_is memcli' -a serve -d 'Keep the index open and the embedder loaded for fast searches (a Unix socket); the CLI uses it when it runs. Ctrl-C stops it.'
complete -c memcli -n '__memcli_is memcli' -a trust -d 'Trust this workspace\'s memcli.toml as it is now. Until then the settings in it that reach outside the workspace or spend a credential (embedding/llm model, api_base, api_key_env, llm.prompt_file) are ignored; a changed file needs trusting again. Your user config and environment always apply.'
complete -c memcli -n '__memcli_is memcli' -a doctor -d 'Check SQLite (FTS5, sqlite-vec), settings, providers, the index, hooks and the cache.'
complete -c memcli -n '__memcli_is memcli' -a hooks -d 'Git hooks that re-index after commit, merge, checkout and rewrite.'
complete -c memcli -n '__memcli_is memcli' -a agent -d 'Coding agents: install memcli\'s hooks and MCP server, and the hooks themselves.'
complete -c memcli -n '__memcli_is memcli' -a config -d 'Show every setting with its value and origin (no subcommand), or get, set, unset one. Layers, later wins: default < user config.toml < workspace memcli.toml < environment (MEMCLI_SECTION_KEY) < command-line flag.'
complete -c memcli -n '__memcli_is memcli' -s w -l workspace -x -d 'Workspace folder (default: $MEMCLI_WORKSPACE or search upwards).'
complete -c memcli -n '__memcli_is memcli' -s q -l quiet -d 'No warnings or progress on stderr.'
complete -c memcli -n '__memcli_is memcli' -l no-color -d 'No colour (also: NO_COLOR).'
complete -c memcli -n '__memcli_is memcli' -l debug -d 'Show tracebacks on errors.'
complete -c memcli -n '__memcli_is memcli' -l version -d 'Print the version and exit.'
complete -c memcli -n '__memcli_is memcli' -s h -l help -d 'Show this message and exit.'

# memcli init
complete -c memcli -n '__memcli_is memcli init' -l git -d 'Run \'git init\' there unless it is already in a git repository.'
complete -c memcli -n '__memcli_is memcli init' -l hooks -d 'Install git hooks that re-index after commit/merge/checkout.'
complete -c memcli -n '__memcli_is memcli init' -l local -d 'Semantic search with a local model (needs memcli[local]): sets embedding.model.'
complete -c memcli -n '__memcli_is memcli init' -l local-model -x -d 'The model --local sets: a fastembed name or a short name (all-MiniLM-L6-v2, English; multilingual-e5-small, about 100 languages). \'list\' shows each with its size, load time and embedding speed. [default: sentence-transformers/all-MiniLM-L6-v2]'
complete -c memcli -n '__memcli_is memcli init' -l model-path -x -d 'Folder holding the local model\'s files (offline machines).'
complete -c memcli -n '__memcli_is memcli init' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli init' -s h -l help -d 'Show this message and exit.'
complete -c memcli -n '__memcli_is memcli init' -F

# memcli add
complete -c memcli -n '__memcli_is memcli add' -l to -x -d 'Append to this file under memory/.'
complete -c memcli -n '__memcli_is memcli add' -l evergreen -d 'Append to memory/MEMORY.md.'
complete -c memcli -n '__memcli_is memcli add' -l ns -x -d 'Namespace: memory/NS/YYYY-MM-DD.md.'
complete -c memcli -n '__memcli_is memcli add' -s t -l type -x -d 'Entry type, e.g. decision.'
complete -c memcli -n '__memcli_is memcli add' -l tag -l tags -x -d 'Tag (repeatable).'
complete -c memcli -n '__memcli_is memcli add' -l no-redact -d 'Do not redact secrets.'
complete -c memcli -n '__memcli_is memcli add' -l commit -d 'git commit the file written (nothing else), naming the fact.'
complete -c memcli -n '__memcli_is memcli add' -l expires -x -d 'It stops applying: 30d, 6w, 3m, 1y, \'in 2 weeks\' or a date YYYY-MM-DD.'
complete -c memcli -n '__memcli_is memcli add' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli add' -s h -l help -d 'Show this message and exit.'

# memcli index
complete -c memcli -n '__memcli_is memcli index' -l force -d 'Rebuild the whole index.'
complete -c memcli -n '__memcli_is memcli index' -l no-embed -d 'Keyword index only: do not compute vectors now.'
complete -c memcli -n '__memcli_is memcli index' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli index' -s h -l help -d 'Show this message and exit.'

# memcli search
complete -c memcli -n '__memcli_is memcli search' -s n -l limit -x -d 'Number of results. [default: 8, the setting search.limit]'
complete -c memcli -n '__memcli_is memcli search' -l min-score -x -d 'Drop results whose final score (after decay) is below (0..1). [default: 0.0, the setting search.min_score]'
complete -c memcli -n '__memcli_is memcli search' -l source -x -d 'Only this namespace (repeatable).'
complete -c memcli -n '__memcli_is memcli search' -l type -x -d 'Only entries of this type.'
complete -c memcli -n '__memcli_is memcli search' -l tag -l tags -x -d 'Only entries with this tag.'
complete -c memcli -n '__memcli_is memcli search' -l since -x -d 'Only files dated on/after a date: 2026-11-20, yesterday, 7d, \'2 weeks ago\'.'
complete -c memcli -n '__memcli_is memcli search' -l until -x -d 'Only files dated on/before a date (as --since).'
complete -c memcli -n '__memcli_is memcli search' -l path -x -d 'Only these paths: a shell glob (coder/*, *.md, memory/2026-11-*) or a folder prefix, from the workspace or from memory/.'
complete -c memcli -n '__memcli_is memcli search' -l decay -l no-decay -d 'Temporal decay: older dated files score lower (MEMORY.md, undated files exempt).'
complete -c memcli -n '__memcli_is memcli search' -l strategy -x -d 'keyword, vector or hybrid (default auto: hybrid when an embedding model is set).'
complete -c memcli -n '__memcli_is memcli search' -l mmr -l no-mmr -d 'Diversify results (MMR): near-duplicates do not crowd out.'
complete -c memcli -n '__memcli_is memcli search' -l mmr-lambda -x -d 'MMR trade-off 0..1: 1 = relevance only, lower = more diverse (implies --mmr). [default: 0.7, the setting search.mmr_lambda]'
complete -c memcli -n '__memcli_is memcli search' -l include-inactive -d 'Also superseded, retracted and expired facts (flagged).'
complete -c memcli -n '__memcli_is memcli search' -l explain -d 'Show how each score came to be (JSON: \'explain\' per result).'
complete -c memcli -n '__memcli_is memcli search' -l format -x -d 'text, json or context (one Markdown block for a prompt).'
complete -c memcli -n '__memcli_is memcli search' -l max-tokens -x -d 'Token budget of --format context (estimate: characters / 4).'
complete -c memcli -n '__memcli_is memcli search' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli search' -l jsonl -d 'One JSON result per line.'
complete -c memcli -n '__memcli_is memcli search' -l files -d 'Only the paths of matching files.'
complete -c memcli -n '__memcli_is memcli search' -l batch -d 'Queries from stdin, one JSON per line.'
complete -c memcli -n '__memcli_is memcli search' -s h -l help -d 'Show this message and exit.'

# memcli status
complete -c memcli -n '__memcli_is memcli status' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli status' -s h -l help -d 'Show this message and exit.'

# memcli files
complete -c memcli -n '__memcli_is memcli files' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli files' -s h -l help -d 'Show this message and exit.'

# memcli get
complete -c memcli -n '__memcli_is memcli get' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli get' -s h -l help -d 'Show this message and exit.'

# memcli supersede
complete -c memcli -n '__memcli_is memcli supersede' -s t -l type -x -d 'Entry type (default: the old).'
complete -c memcli -n '__memcli_is memcli supersede' -l tag -l tags -x -d 'Tag (default: the old ones).'
complete -c memcli -n '__memcli_is memcli supersede' -l dry-run -d 'Show what would be written; write nothing.'
complete -c memcli -n '__memcli_is memcli supersede' -l commit -d 'git commit the files changed, telling the story.'
complete -c memcli -n '__memcli_is memcli supersede' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli supersede' -s h -l help -d 'Show this message and exit.'

# memcli forget
complete -c memcli -n '__memcli_is memcli forget' -l reason -x -d 'Why it is wrong or no longer true. [required]'
complete -c memcli -n '__memcli_is memcli forget' -l purge -d 'Also remove its text from the files (git history keeps it).'
complete -c memcli -n '__memcli_is memcli forget' -l dry-run -d 'Show what would be written; write nothing.'
complete -c memcli -n '__memcli_is memcli forget' -l commit -d 'git commit the files changed, telling the story.'
complete -c memcli -n '__memcli_is memcli forget' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli forget' -s h -l help -d 'Show this message and exit.'

# memcli confirm
complete -c memcli -n '__memcli_is memcli confirm' -l by -x -d 'Who vouches for it.'
complete -c memcli -n '__memcli_is memcli confirm' -l dry-run -d 'Show what would be written; write nothing.'
complete -c memcli -n '__memcli_is memcli confirm' -l commit -d 'git commit the files changed, telling the story.'
complete -c memcli -n '__memcli_is memcli confirm' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli confirm' -s h -l help -d 'Show this message and exit.'

# memcli review
complete -c memcli -n '__memcli_is memcli review' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli review' -s h -l help -d 'Show this message and exit.'

# memcli watch
complete -c memcli -n '__memcli_is memcli watch' -l json -d 'One JSON event per line on stdout (ready, sync, ..., stopped).'
complete -c memcli -n '__memcli_is memcli watch' -s q -l quiet -d 'No per-sync lines on stderr.'
complete -c memcli -n '__memcli_is memcli watch' -l debounce -x -d 'Wait until files are quiet this long before indexing [setting watch.debounce_ms].'
complete -c memcli -n '__memcli_is memcli watch' -l serve -d 'Also answer the CLI\'s requests as the workspace\'s engine (memcli serve), with no idle timeout: one process for both.'
complete -c memcli -n '__memcli_is memcli watch' -s h -l help -d 'Show this message and exit.'

# memcli flush
complete -c memcli -n '__memcli_is memcli flush' -l ns -x -d 'Namespace: memory/NS/YYYY-MM-DD.md.'
complete -c memcli -n '__memcli_is memcli flush' -l dry-run -d 'Show the facts that would be written; write nothing.'
complete -c memcli -n '__memcli_is memcli flush' -l prompt-file -r -F -d 'Instructions for the model (default: llm.prompt_file or built in).'
complete -c memcli -n '__memcli_is memcli flush' -l commit -d 'git commit the memory file afterwards.'
complete -c memcli -n '__memcli_is memcli flush' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli flush' -s h -l help -d 'Show this message and exit.'

# memcli diff
complete -c memcli -n '__memcli_is memcli diff' -l since -x -d 'From the last commit before DATE (YYYY-MM-DD, yesterday, 7d, \'2 weeks ago\').'
complete -c memcli -n '__memcli_is memcli diff' -l stat -d 'Only counts per file.'
complete -c memcli -n '__memcli_is memcli diff' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli diff' -s h -l help -d 'Show this message and exit.'

# memcli log
complete -c memcli -n '__memcli_is memcli log' -s n -l limit -x -d 'Number of commits. [default: 20]'
complete -c memcli -n '__memcli_is memcli log' -l since -x -d 'Only commits since DATE (as diff --since).'
complete -c memcli -n '__memcli_is memcli log' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli log' -s h -l help -d 'Show this message and exit.'

# memcli sync
complete -c memcli -n '__memcli_is memcli sync' -l strategy -x -d 'rebase or merge (default: setting git.sync_strategy).'
complete -c memcli -n '__memcli_is memcli sync' -l no-push -d 'Pull and re-index, do not push.'
complete -c memcli -n '__memcli_is memcli sync' -l no-commit -d 'Refuse to run with uncommitted memory changes.'
complete -c memcli -n '__memcli_is memcli sync' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli sync' -s h -l help -d 'Show this message and exit.'

# memcli mcp
complete -c memcli -n '__memcli_is memcli mcp' -s h -l help -d 'Show this message and exit.'

# memcli serve
complete -c memcli -n '__memcli_is memcli serve' -l detach -d 'Start it in the background and return.'
complete -c memcli -n '__memcli_is memcli serve' -l status -d 'Whether an engine serves this workspace.'
complete -c memcli -n '__memcli_is memcli serve' -l stop -d 'Stop the engine of this workspace.'
complete -c memcli -n '__memcli_is memcli serve' -l idle-timeout -x -d 'Stop after this many minutes without a request [setting engine.idle_timeout].'
complete -c memcli -n '__memcli_is memcli serve' -l watch -l no-watch -d 'Re-index files as they change (memcli watch) in this process, so searches skip the full changed-files check. [default: watch]'
complete -c memcli -n '__memcli_is memcli serve' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli serve' -s h -l help -d 'Show this message and exit.'

# memcli trust
complete -c memcli -n '__memcli_is memcli trust' -l show -d 'Show the trust state; change nothing.'
complete -c memcli -n '__memcli_is memcli trust' -l revoke -d 'Forget the trust in this memcli.toml.'
complete -c memcli -n '__memcli_is memcli trust' -l list -d 'Every trusted memcli.toml recorded in the user config.'
complete -c memcli -n '__memcli_is memcli trust' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli trust' -s h -l help -d 'Show this message and exit.'

# memcli doctor
complete -c memcli -n '__memcli_is memcli doctor' -l offline -d 'Do not contact the embedding or LLM server.'
complete -c memcli -n '__memcli_is memcli doctor' -l timeout -x -d 'How long to wait for each provider. [default: 3.0]'
complete -c memcli -n '__memcli_is memcli doctor' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli doctor' -s h -l help -d 'Show this message and exit.'

# memcli hooks
complete -c memcli -n '__memcli_is memcli hooks' -a install -d 'Install the hooks (chaining any hook already there); safe to run again.'
complete -c memcli -n '__memcli_is memcli hooks' -a uninstall -d 'Remove the hooks and restore the hooks they chained.'
complete -c memcli -n '__memcli_is memcli hooks' -a status -d 'Which hooks are installed, chained, missing or someone else\'s.'
complete -c memcli -n '__memcli_is memcli hooks' -s h -l help -d 'Show this message and exit.'

# memcli hooks install
complete -c memcli -n '__memcli_is memcli hooks install' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli hooks install' -s h -l help -d 'Show this message and exit.'

# memcli hooks uninstall
complete -c memcli -n '__memcli_is memcli hooks uninstall' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli hooks uninstall' -s h -l help -d 'Show this message and exit.'

# memcli hooks status
complete -c memcli -n '__memcli_is memcli hooks status' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli hooks status' -s h -l help -d 'Show this message and exit.'

# memcli agent
complete -c memcli -n '__memcli_is memcli agent' -a install -d 'Install into an agent: hooks, MCP server and a memory policy (safe to run again).'
complete -c memcli -n '__memcli_is memcli agent' -a uninstall -d 'Remove exactly what install added; every other setting stays.'
complete -c memcli -n '__memcli_is memcli agent' -a status -d 'Where memcli is installed, whether the hooks work here, and their latest errors.'
complete -c memcli -n '__memcli_is memcli agent' -a hook -d 'Run one hook: read the agent\'s JSON payload on stdin, print the agent\'s JSON. Always exits 0; failures go to .memcli/agent.log.'
complete -c memcli -n '__memcli_is memcli agent' -a flush-session -d 'Flush the turns of a session\'s transcript not flushed before (what the pre-compact and session-end hooks start in the background), and with --due the sessions due.'
complete -c memcli -n '__memcli_is memcli agent' -a import -d 'Save the facts of this project\'s past agent sessions (Claude Code\'s, Codex\'s and Gemini CLI\'s session folders, OpenCode\'s database; sessions run here or below), newest first. A session is never saved twice (hooks and imports share one record), so a stopped import goes on where it stopped; --dry-run lists what it would read.'
complete -c memcli -n '__memcli_is memcli agent' -s h -l help -d 'Show this message and exit.'

# memcli agent install
complete -c memcli -n '__memcli_is memcli agent install' -l scope -x -d 'project (this project\'s files) or user (your home folder). [default: project]'
complete -c memcli -n '__memcli_is memcli agent install' -l project -r -F -d 'The folder the agent runs in (default: the workspace).'
complete -c memcli -n '__memcli_is memcli agent install' -l dry-run -d 'Show the changes as a diff; write nothing.'
complete -c memcli -n '__memcli_is memcli agent install' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli agent install' -s h -l help -d 'Show this message and exit.'

# memcli agent uninstall
complete -c memcli -n '__memcli_is memcli agent uninstall' -l scope -x -d 'project (this project\'s files) or user (your home folder). [default: project]'
complete -c memcli -n '__memcli_is memcli agent uninstall' -l project -r -F -d 'The folder the agent runs in (default: the workspace).'
complete -c memcli -n '__memcli_is memcli agent uninstall' -l dry-run -d 'Show the changes as a diff; write nothing.'
complete -c memcli -n '__memcli_is memcli agent uninstall' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli agent uninstall' -s h -l help -d 'Show this message and exit.'

# memcli agent status
complete -c memcli -n '__memcli_is memcli agent status' -l project -r -F -d 'The folder the agent runs in (default: the workspace).'
complete -c memcli -n '__memcli_is memcli agent status' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli agent status' -s h -l help -d 'Show this message and exit.'

# memcli agent hook
complete -c memcli -n '__memcli_is memcli agent hook' -s h -l help -d 'Show this message and exit.'

# memcli agent flush-session
complete -c memcli -n '__memcli_is memcli agent flush-session' -l session-id -x -d 'The agent\'s session id.'
complete -c memcli -n '__memcli_is memcli agent flush-session' -l transcript -r -F -d 'The session\'s transcript file.'
complete -c memcli -n '__memcli_is memcli agent flush-session' -l event -x -d 'What asked for it (for the log). [default: manual]'
complete -c memcli -n '__memcli_is memcli agent flush-session' -l due -d 'Then flush the sessions due: those whose flush failed, and this project\'s recent sessions of the agents never flushed.'
complete -c memcli -n '__memcli_is memcli agent flush-session' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli agent flush-session' -s h -l help -d 'Show this message and exit.'

# memcli agent import
complete -c memcli -n '__memcli_is memcli agent import' -l agent -x -d 'Whose sessions: claude-code, codex, gemini, opencode or all. [default: all]'
complete -c memcli -n '__memcli_is memcli agent import' -l days -x -d 'Sessions changed within this many days. [default: 30]'
complete -c memcli -n '__memcli_is memcli agent import' -l max-sessions -x -d 'At most this many sessions, the newest first. [default: 50]'
complete -c memcli -n '__memcli_is memcli agent import' -l dry-run -d 'List the sessions it would read; read and send nothing.'
complete -c memcli -n '__memcli_is memcli agent import' -l json -d 'Print JSON.'
complete -c memcli -n '__memcli_is memcli agent import' -s h -l help -d 'Show this message and exit.'

# memcli config
complete -c memcli -n '__memcli_is memcli config' -a get -d 'Print the value of one setting (JSON: with origin, default and variable).'
complete -c memcli -n '__memcli_is memcli config' -a set -d 'Write one setting to memcli.toml (or --user config.toml), keeping comments. No secrets.'
complete -c memcli -n '__memcli_is memcli config' -a unset -d 'Remove one setting from memcli.toml (or --user config.toml), keeping comments.'
complete -c memcli -n '__memcli_is memcli config' -a path -d 'The config files memcli reads (they need not exist).'
complete -c memcli -n '__memcli_is memcli config' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli config' -s h -l help -d 'Show this message and exit.'

# memcli config get
complete -c memcli -n '__memcli_is memcli config get' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli config get' -s h -l help -d 'Show this message and exit.'
complete -c memcli -n '__memcli_is memcli config get' -a 'embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity'

# memcli config set
complete -c memcli -n '__memcli_is memcli config set' -l user -d 'The user config.toml instead of the workspace memcli.toml.'
complete -c memcli -n '__memcli_is memcli config set' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli config set' -s h -l help -d 'Show this message and exit.'
complete -c memcli -n '__memcli_is memcli config set' -a 'embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity'

# memcli config unset
complete -c memcli -n '__memcli_is memcli config unset' -l user -d 'The user config.toml instead of the workspace memcli.toml.'
complete -c memcli -n '__memcli_is memcli config unset' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli config unset' -s h -l help -d 'Show this message and exit.'
complete -c memcli -n '__memcli_is memcli config unset' -a 'embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity'

# memcli config path
complete -c memcli -n '__memcli_is memcli config path' -l user -d 'Print only the user config file.'
complete -c memcli -n '__memcli_is memcli config path' -l workspace -d 'Print only the workspace memcli.toml.'
complete -c memcli -n '__memcli_is memcli config path' -l json -d 'Print JSON (stable field names, see docs/json.md).'
complete -c memcli -n '__memcli_is memcli config path' -s h -l help -d 'Show this message and exit.'
