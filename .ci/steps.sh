# The `run` helper of .ci/demo and .ci/quickstart (sourced): print a command as it would be
# typed, quoted where the shell needs it (so a line pasted from the output runs as shown),
# then run it.
shown() {
  local arg out=()
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then
      out+=("$arg")
    elif [[ $arg != *[\"\$\`\\!]* ]]; then
      out+=("\"$arg\"")
    else
      out+=("'${arg//\'/\'\\\'\'}'")
    fi
  done
  printf '%s' "${out[*]}"
}
run() { printf '\n$ %s\n' "$(shown "$@")"; "$@"; }
