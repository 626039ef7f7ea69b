# bash completion for memcli: generated from the command tree by 'make docs' (.ci/gendocs.py); do not edit.
# Install: copy to ~/.local/share/bash-completion/completions/memcli
# or add 'source /path/to/memcli.bash' to ~/.bashrc.

_memcli() {
    local cur prev cmd=memcli skip=0 pos=0 i w opts="" subs=""
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    # --opt=value arrives as '--opt' '=' 'value' (COMP_WORDBREAKS)
    if [[ $cur == "=" ]]; then
        cur=""
    elif [[ $prev == "=" ]]; then
        prev="${COMP_WORDS[COMP_CWORD-2]}"
    fi
    # find the command typed so far and how many arguments it has
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        if [[ $w == "=" ]]; then skip=1; continue; fi
        if ((skip)); then skip=0; continue; fi
        case "$cmd $w" in
            'memcli -w'|'memcli --workspace'|'memcli init --local-model'|\
            'memcli init --model-path'|'memcli add --to'|'memcli add --ns'|'memcli add -t'|\
            'memcli add --type'|'memcli add --tag'|'memcli add --tags'|'memcli add --expires'|\
            'memcli search -n'|'memcli search --limit'|'memcli search --min-score'|\
            'memcli search --source'|'memcli search --type'|'memcli search --tag'|\
            'memcli search --tags'|'memcli search --since'|'memcli search --until'|\
            'memcli search --path'|'memcli search --strategy'|'memcli search --mmr-lambda'|\
            'memcli search --format'|'memcli search --max-tokens'|'memcli supersede -t'|\
            'memcli supersede --type'|'memcli supersede --tag'|'memcli supersede --tags'|\
            'memcli forget --reason'|'memcli confirm --by'|'memcli watch --debounce'|\
            'memcli flush --ns'|'memcli flush --prompt-file'|'memcli diff --since'|\
            'memcli log -n'|'memcli log --limit'|'memcli log --since'|'memcli sync --strategy'|\
            'memcli serve --idle-timeout'|'memcli doctor --timeout'|\
            'memcli agent install --scope'|'memcli agent install --project'|\
            'memcli agent uninstall --scope'|'memcli agent uninstall --project'|\
            'memcli agent status --project'|'memcli agent flush-session --session-id'|\
            'memcli agent flush-session --transcript'|'memcli agent flush-session --event'|\
            'memcli agent import --agent'|'memcli agent import --days'|\
            'memcli agent import --max-sessions') skip=1 ;;
            'memcli init'|'memcli add'|'memcli index'|'memcli search'|'memcli status'|\
            'memcli files'|'memcli get'|'memcli supersede'|'memcli forget'|'memcli confirm'|\
            'memcli review'|'memcli watch'|'memcli flush'|'memcli diff'|'memcli log'|\
            'memcli sync'|'memcli mcp'|'memcli serve'|'memcli trust'|'memcli doctor'|\
            'memcli hooks'|'memcli agent'|'memcli config'|'memcli hooks install'|\
            'memcli hooks uninstall'|'memcli hooks status'|'memcli agent install'|\
            'memcli agent uninstall'|'memcli agent status'|'memcli agent hook'|\
            'memcli agent flush-session'|'memcli agent import'|'memcli config get'|\
            'memcli config set'|'memcli config unset'|'memcli config path') cmd="$cmd $w"; pos=0 ;;
            *) [[ $w == -* ]] || pos=$((pos + 1)) ;;
        esac
    done

    # the value of an option
    if [[ ${COMP_WORDS[COMP_CWORD]} == "=" || $cur != -* ]]; then
        case "$cmd $prev" in
            'memcli flush --prompt-file') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
            'memcli agent install --project') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
            'memcli agent uninstall --project') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
            'memcli agent status --project') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
            'memcli agent flush-session --transcript') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
            'memcli -w'|'memcli --workspace'|'memcli init --local-model'|\
            'memcli init --model-path'|'memcli add --to'|'memcli add --ns'|'memcli add -t'|\
            'memcli add --type'|'memcli add --tag'|'memcli add --tags'|'memcli add --expires'|\
            'memcli search -n'|'memcli search --limit'|'memcli search --min-score'|\
            'memcli search --source'|'memcli search --type'|'memcli search --tag'|\
            'memcli search --tags'|'memcli search --since'|'memcli search --until'|\
            'memcli search --path'|'memcli search --strategy'|'memcli search --mmr-lambda'|\
            'memcli search --format'|'memcli search --max-tokens'|'memcli supersede -t'|\
            'memcli supersede --type'|'memcli supersede --tag'|'memcli supersede --tags'|\
            'memcli forget --reason'|'memcli confirm --by'|'memcli watch --debounce'|\
            'memcli flush --ns'|'memcli diff --since'|'memcli log -n'|'memcli log --limit'|\
            'memcli log --since'|'memcli sync --strategy'|'memcli serve --idle-timeout'|\
            'memcli doctor --timeout'|'memcli agent install --scope'|\
            'memcli agent uninstall --scope'|'memcli agent flush-session --session-id'|\
            'memcli agent flush-session --event'|'memcli agent import --agent'|\
            'memcli agent import --days'|'memcli agent import --max-sessions') return ;;
        esac
    fi

    case "$cmd" in
        'memcli') opts="-w --workspace -q --quiet --no-color --debug --version -h --help"; subs="init add index search status files get supersede forget confirm review watch flush diff log sync mcp serve trust doctor hooks agent config" ;;
        'memcli init') opts="--git --hooks --local --local-model --model-path --json -h --help" ;;
        'memcli add') opts="--to --evergreen --ns -t --type --tag --tags --no-redact --commit --expires --json -h --help" ;;
        'memcli index') opts="--force --no-embed --json -h --help" ;;
        'memcli search') opts="-n --limit --min-score --source --type --tag --tags --since --until --path --decay --no-decay --strategy --mmr --no-mmr --mmr-lambda --include-inactive --explain --format --max-tokens --json --jsonl --files --batch -h --help" ;;
        'memcli status') opts="--json -h --help" ;;
        'memcli files') opts="--json -h --help" ;;
        'memcli get') opts="--json -h --help" ;;
        'memcli supersede') opts="-t --type --tag --tags --dry-run --commit --json -h --help" ;;
        'memcli forget') opts="--reason --purge --dry-run --commit --json -h --help" ;;
        'memcli confirm') opts="--by --dry-run --commit --json -h --help" ;;
        'memcli review') opts="--json -h --help" ;;
        'memcli watch') opts="--json -q --quiet --debounce --serve -h --help" ;;
        'memcli flush') opts="--ns --dry-run --prompt-file --commit --json -h --help" ;;
        'memcli diff') opts="--since --stat --json -h --help" ;;
        'memcli log') opts="-n --limit --since --json -h --help" ;;
        'memcli sync') opts="--strategy --no-push --no-commit --json -h --help" ;;
        'memcli mcp') opts="-h --help" ;;
        'memcli serve') opts="--detach --status --stop --idle-timeout --watch --no-watch --json -h --help" ;;
        'memcli trust') opts="--show --revoke --list --json -h --help" ;;
        'memcli doctor') opts="--offline --timeout --json -h --help" ;;
        'memcli hooks') opts="-h --help"; subs="install uninstall status" ;;
        'memcli hooks install') opts="--json -h --help" ;;
        'memcli hooks uninstall') opts="--json -h --help" ;;
        'memcli hooks status') opts="--json -h --help" ;;
        'memcli agent') opts="-h --help"; subs="install uninstall status hook flush-session import" ;;
        'memcli agent install') opts="--scope --project --dry-run --json -h --help" ;;
        'memcli agent uninstall') opts="--scope --project --dry-run --json -h --help" ;;
        'memcli agent status') opts="--project --json -h --help" ;;
        'memcli agent hook') opts="-h --help" ;;
        'memcli agent flush-session') opts="--session-id --transcript --event --due --json -h --help" ;;
        'memcli agent import') opts="--agent --days --max-sessions --dry-run --json -h --help" ;;
        'memcli config') opts="--json -h --help"; subs="get set unset path" ;;
        'memcli config get') opts="--json -h --help" ;;
        'memcli config set') opts="--user --json -h --help" ;;
        'memcli config unset') opts="--user --json -h --help" ;;
        'memcli config path') opts="--user --workspace --json -h --help" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    elif [[ -n $subs ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return
    fi
    # a positional argument
    case "$cmd $pos" in
        'memcli init 0') compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
        'memcli config get 0') COMPREPLY=($(compgen -W "embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity" -- "$cur")) ;;
        'memcli config set 0') COMPREPLY=($(compgen -W "embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity" -- "$cur")) ;;
        'memcli config unset 0') COMPREPLY=($(compgen -W "embedding.model embedding.model_path embedding.api_base embedding.api_key_env embedding.dimensions embedding.batch_size embedding.timeout embedding.max_retries llm.model llm.api_base llm.api_key_env llm.timeout llm.max_retries llm.prompt_file llm.max_chars llm.max_requests search.limit search.strategy search.min_score search.fusion search.rrf_k search.keyword_weight search.vector_weight search.candidates search.mmr search.mmr_lambda search.time_boost search.name_weight search.trust_confirmed search.trust_extracted search.trust_corroborated search.snippet_lines search.snippet_chars search.snippet_before_chars search.hybrid_snippet_before_chars search.neighbour_weight search.heading_weight search.chunk_weight search.proximity_weight search.max_tokens decay.enabled decay.half_life_days index.include index.max_file_mb index.sync_on_search index.freshness index.full_check_files index.full_check_secs index.chunk_chars index.lock_timeout add.max_kb cache.max_mb watch.debounce_ms git.sync_strategy git.sync_timeout engine.idle_timeout engine.prune_from engine.autostart agent.own_model agent.max_flushes_per_day agent.briefing_tokens agent.briefing_types agent.briefing_latest agent.recall_tokens agent.recall_limit agent.recall_min_score agent.recall_min_similarity" -- "$cur")) ;;
    esac
}

complete -F _memcli memcli
