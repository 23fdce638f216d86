/**
 * The shell wrappers `berth shell-init <shell>` prints (spec section 12): a
 * `berth` function that turns `berth switch <berth>` into a `cd` to the folder
 * `berth path` prints, and passes every other call to the real binary
 * unchanged (so `cd "$(berth start x)"` keeps working). Only that exact form
 * changes folder: `berth switch` with no berth, with a flag or with more
 * arguments is the binary's own (its usage error, its help, its --json); a
 * bare `berth path` would list every berth, which is no folder to cd to. A
 * failed lookup leaves the directory as it was and keeps berth's exit code.
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

const POSIX = `# berth shell integration: eval "$(berth shell-init SHELL)"
berth() {
  if [ "$#" -eq 2 ] && [ "$1" = "switch" ] && [ "\${2#-}" = "$2" ]; then
    local __berth_dir
    __berth_dir="$(command berth path "$2")" || return
    cd -- "$__berth_dir" || return
  else
    command berth "$@"
  fi
}
`;

const FISH = `# berth shell integration: berth shell-init fish | source
function berth
    if test (count $argv) -eq 2; and test "$argv[1]" = switch; and not string match -q -- '-*' $argv[2]
        set -l __berth_dir (command berth path $argv[2]); or return
        cd -- "$__berth_dir"
    else
        command berth $argv
    end
end
`;

export function renderShellInit(shell: Shell): string {
  return shell === "fish" ? FISH : POSIX.replace("SHELL", shell);
}
