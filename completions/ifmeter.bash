# bash completion for ifmeter(1). Interface names come from the running daemon
# (`ifmeter list --json`); nothing is completed from it when the daemon is not running.
_ifmeter() {
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="summary 5min hours days months years top list events status rate live log check chart metrics plans containers notify help version"
    local common="--socket --json --si --bits --help"
    case $prev in
        -i|--interface)
            local names
            names=$(ifmeter list --json 2>/dev/null | grep -o '"name":"[^"]*"' | cut -d'"' -f4)
            COMPREPLY=($(compgen -W "$names" -- "$cur"))
            return ;;
        --class)
            COMPREPLY=($(compgen -W "wifi cellular ethernet tunnel virtual loopback other" -- "$cur"))
            return ;;
        --kind)
            COMPREPLY=($(compgen -W "estimate event first-sight appeared epoch-started reboot recreated deleted vanished reset wrap implausible gap rename clock-jump" -- "$cur"))
            return ;;
        --period)
            COMPREPLY=($(compgen -W "day month" -- "$cur"))
            return ;;
        --direction)
            COMPREPLY=($(compgen -W "rx tx both" -- "$cur"))
            return ;;
        --socket|--file|-o|--output)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --log-dir|--textfile)
            COMPREPLY=($(compgen -d -- "$cur"))
            return ;;
        chart)
            COMPREPLY=($(compgen -W "hours days months" -- "$cur"))
            return ;;
    esac
    local command="" word
    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case " $commands " in *" $word "*) command=$word; break ;; esac
    done
    local options
    case $command in
        ""|summary) options="-i --interface --class --oneline" ;;
        5min|hours|days|months|years) options="-i --interface --class --from --to --limit" ;;
        top) options="-i --interface --class --limit" ;;
        list|rate) options="-i --interface --class" ;;
        live) options="-i --interface --class --count" ;;
        events) options="-i --interface --kind --from --to --limit" ;;
        log) options="-i --interface --class --kind --from --to --follow --log-dir --file" ;;
        check) options="-i --interface --period --limit --warn --projected --direction --plan" ;;
        notify) options="--exec --desktop --state --once" ;;
        chart) options="-i --interface --class --from --to --limit -o --output" ;;
        metrics) options="--openmetrics --textfile" ;;
        *) options="" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$common $options" -- "$cur"))
    elif [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
}
complete -F _ifmeter ifmeter
