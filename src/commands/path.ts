import type { Context } from "../context.js";
import { type PathData, readBerthPath } from "../core/agents/berth-paths.js";
import { UserError } from "../errors.js";
import { success, type VerbResult } from "../result.js";
import { shellCommand } from "../text.js";
import { renderShellInit, SHELLS, type Shell } from "../ui/shell-init.js";
import type { CommandOutcome } from "./outcome.js";

function pathOutcome(result: VerbResult<PathData>): CommandOutcome {
  const data = result.data;
  return {
    result,
    human: () => ({
      stdout:
        data?.berth != null
          ? `${data.berth.path}\n`
          : (data?.berths ?? []).map((b) => `${b.id}\t${b.path}\n`).join(""),
    }),
  };
}

/** `berth path [<berth>]`: its folder alone on stdout; no argument: every berth, `id<TAB>path`. */
export async function pathCommand(
  ctx: Context,
  target: string | undefined,
): Promise<CommandOutcome> {
  return pathOutcome(await readBerthPath(ctx, "path", target));
}

/**
 * `berth switch <berth>` reached the binary: the shell wrapper is not loaded,
 * so no process can change the caller's directory. Print the folder (so
 * `cd "$(berth switch x)"` works) and say how to load the wrapper.
 */
export async function switchCommand(ctx: Context, target: string): Promise<CommandOutcome> {
  const outcome = pathOutcome(await readBerthPath(ctx, "switch", target));
  outcome.result.hints.push(
    'berth switch changes directory only through the shell wrapper: add eval "$(berth shell-init bash)" to ~/.bashrc (zsh: the same with zsh; fish: berth shell-init fish | source)',
  );
  return outcome;
}

export async function shellInitCommand(_ctx: Context, shell: string): Promise<CommandOutcome> {
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UserError("usage", `berth shell-init knows ${SHELLS.join(", ")}, not "${shell}".`, {
      next: shellCommand(["berth", "shell-init", "bash"]),
    });
  }
  const script = renderShellInit(shell as Shell);
  return {
    result: success("shell-init", { shell, script }),
    human: () => ({ stdout: script }),
  };
}
