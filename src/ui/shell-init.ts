/**
 * The shell wrappers `berth shell-init <shell>` prints (spec section 12): a
 * `berth` function that turns `berth switch <berth>` into a `cd` to the folder
 * `berth path` prints, and passes every other call to the real binary
 * unchanged (so `cd "$(berth start x)"` keeps working). A failed lookup leaves
 * the directory as it was and keeps berth's exit code.
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

const POSIX = `# berth shell integration: eval "$(berth shell-init SHELL)"
berth() {
  if [ "$1" = "switch" ]; then
    shift
    local __berth_dir
    __berth_dir="$(command berth path "$@")" || return
    cd -- "$__berth_dir" || return
  else
    command berth "$@"
  fi
}
`;

const FISH = `# berth shell integration: berth shell-init fish | source
function berth
    if test (count $argv) -ge 1; and test "$argv[1]" = switch
        set -l __berth_dir (command berth path $argv[2..-1]); or return
        cd -- "$__berth_dir"
    else
        command berth $argv
    end
end
`;

export function renderShellInit(shell: Shell): string {
  return shell === "fish" ? FISH : POSIX.replace("SHELL", shell);
}
