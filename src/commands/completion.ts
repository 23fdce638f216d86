import type { Context } from "../context.js";
import { UserError } from "../errors.js";
import { success } from "../result.js";
import { shellCommand } from "../text.js";
import {
  type CommandSpec,
  renderBashCompletion,
  renderFishCompletion,
  renderZshCompletion,
} from "../ui/completion.js";
import type { CommandOutcome } from "./outcome.js";

const RENDERERS = {
  bash: renderBashCompletion,
  zsh: renderZshCompletion,
  fish: renderFishCompletion,
} as const;

/** `berth completion <bash|zsh|fish>`: the script for that shell, from the declared commands. */
export async function completionCommand(
  _ctx: Context,
  shell: string,
  commands: readonly CommandSpec[],
): Promise<CommandOutcome> {
  if (!Object.hasOwn(RENDERERS, shell)) {
    throw new UserError("usage", `berth completion knows bash, zsh, fish, not "${shell}".`, {
      next: shellCommand(["berth", "completion", "bash"]),
    });
  }
  const script = RENDERERS[shell as keyof typeof RENDERERS](commands);
  return { result: success("completion", { shell, script }), human: () => ({ stdout: script }) };
}
