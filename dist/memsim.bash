# bash completion for memsim and memsim-analyze (installed as
# share/bash-completion/completions/memsim and .../memsim-analyze).
#
# The options come from the commands' own --help, so they cannot drift:
# every "--name" a help text shows, and those followed by an upper-case
# word (--out DIR) take a value.

# _memsim_help PROG CMD: the help text of memsim CMD (or of PROG itself
# when CMD is empty).
_memsim_help() {
    if [ -n "$2" ]; then "$1" "$2" --help 2>/dev/null; else "$1" --help 2>/dev/null; fi
}

# _memsim_complete_opts PROG CMD CUR START: COMPREPLY for the words of
# memsim CMD (memsim-analyze when CMD is empty) from index START on.
_memsim_complete_opts() {
    local prog=$1 cmd=$2 cur=$3 start=$4 help opts valued prev i w
    help=$(_memsim_help "$prog" "$cmd")
    opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    valued=" $(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z0-9-]*[ =][A-Z][A-Z,]*' |
        sed 's/[ =].*//' | sort -u | tr '\n' ' ') -o -s -d "
    prev=${COMP_WORDS[COMP_CWORD-1]}
    # memsim run: from the command to run on, the words are its own.
    if [ "$cmd" = run ]; then
        i=$start
        while [ "$i" -lt "$COMP_CWORD" ]; do
            w=${COMP_WORDS[i]}
            case $w in
            --) i=$((i + 1)); break ;;
            -*) case $valued in *" $w "*) i=$((i + 1)) ;; esac ;;
            *) break ;;
            esac
            i=$((i + 1))
        done
        if [ "$i" -lt "$COMP_CWORD" ]; then
            if declare -F _command_offset >/dev/null 2>&1; then
                _command_offset "$i"
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
        if [ "$i" -eq "$COMP_CWORD" ] && [ "${COMP_WORDS[i-1]}" = -- ]; then
            COMPREPLY=($(compgen -c -- "$cur" | sort -u))
            return
        fi
    fi
    case $prev in
    -s | --strategy)
        local known
        known=$(printf '%s\n' "$help" | sed -n 's/.*known: \(.*\))*$/\1/p' | tr -d ',)')
        COMPREPLY=($(compgen -W "$known none all" -- "$cur"))
        return ;;
    --collapsed) return ;;
    esac
    case $valued in
    *" $prev "*)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    esac
    if [ "${cur#-}" != "$cur" ]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [ "$cmd" = run ]; then
        COMPREPLY=($(compgen -c -- "$cur" | sort -u))
    elif [ "$cmd" != simulate ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_memsim() {
    local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run analyze simulate help version" -- "$cur"))
        return
    fi
    case ${COMP_WORDS[1]} in
    help)
        [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "run analyze simulate" -- "$cur"))
        ;;
    run | analyze | simulate)
        _memsim_complete_opts "$prog" "${COMP_WORDS[1]}" "$cur" 2
        ;;
    esac
}

_memsim_analyze() {
    COMPREPLY=()
    _memsim_complete_opts "${COMP_WORDS[0]}" "" "${COMP_WORDS[COMP_CWORD]}" 1
}

complete -F _memsim memsim
complete -F _memsim_analyze memsim-analyze
