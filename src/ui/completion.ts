/**
 * The completion scripts `berth completion <shell>` prints, from the command
 * tree cli-run.ts declares (so a new verb or flag completes without editing this
 * file). Berth ids come from `berth path` at completion time.
 */

export interface CommandSpec {
  /** The words after `berth`, e.g. ["worktree", "drop"]. */
  path: string[];
  /** Names the command answers to (its name and aliases). */
  names: string[];
  subcommands: string[];
  /** Long and short flags. */
  flags: string[];
  /** Its argument is a berth. */
  takesBerth: boolean;
}

/** Flags whose value is a berth. */
const BERTH_FLAGS = ["--green", "--landed"];

export function renderBashCompletion(commands: readonly CommandSpec[]): string {
  // Longest paths first, so "worktree drop" is matched before "worktree".
  const sorted = [...commands].sort((a, b) => b.path.length - a.path.length);
  const cases = sorted.flatMap((c) => {
    const words = `${[...c.subcommands, ...c.flags].join(" ")}${c.takesBerth ? "$(__berth_ids_line)" : ""}`;
    if (c.path.length === 0) return [`    "") words="${words}" ;;`];
    const patterns = c.names.map((name) => {
      const path = [...c.path.slice(0, -1), name].join(" ");
      return `"${path}"|"${path} "*`;
    });
    return [`    ${patterns.join("|")}) words="${words}" ;;`];
  });
  return `# berth completion for bash: eval "$(berth completion bash)"
__berth_ids() { command berth path 2>/dev/null | cut -f1; }
__berth_ids_line() { local ids; ids="$(__berth_ids | tr '\\n' ' ')"; [ -n "$ids" ] && printf ' %s' "$ids"; }
_berth() {
  # Not "path": zsh (through bashcompinit) ties that name to $PATH, even as a local.
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" words="" i w
  case "$prev" in
    ${BERTH_FLAGS.join("|")}) COMPREPLY=($(compgen -W "$(__berth_ids)" -- "$cur")); return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) ;; *) cmdpath="\${cmdpath:+$cmdpath }$w" ;; esac
  done
  case "$cmdpath" in
${cases.join("\n")}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _berth berth
`;
}

/** zsh runs the bash function through bashcompinit. */
export function renderZshCompletion(commands: readonly CommandSpec[]): string {
  return `# berth completion for zsh: eval "$(berth completion zsh)"
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${renderBashCompletion(commands).split("\n").slice(1).join("\n")}`;
}

export function renderFishCompletion(commands: readonly CommandSpec[]): string {
  const lines = [
    "# berth completion for fish: berth completion fish > ~/.config/fish/completions/berth.fish",
    "complete -c berth -f",
  ];
  const ids = "(command berth path 2>/dev/null | string split -f1 \\t)";
  for (const c of commands) {
    const condition =
      c.path.length === 0
        ? "__fish_use_subcommand"
        : `__fish_seen_subcommand_from ${c.names.join(" ")}`;
    if (c.subcommands.length > 0) {
      lines.push(`complete -c berth -n '${condition}' -a '${c.subcommands.join(" ")}'`);
    }
    for (const flag of c.flags.filter((f) => f.startsWith("--"))) {
      const value = BERTH_FLAGS.includes(flag) ? ` -r -a '${ids}'` : "";
      lines.push(`complete -c berth -n '${condition}' -l ${flag.slice(2)}${value}`);
    }
    if (c.takesBerth) lines.push(`complete -c berth -n '${condition}' -a '${ids}'`);
  }
  return `${lines.join("\n")}\n`;
}
