import { createColors } from "picocolors";

export type Colors = ReturnType<typeof createColors>;

/** Color only on a terminal, and never when NO_COLOR is set. */
export function colorsFor(isTTY: boolean, env: NodeJS.ProcessEnv): Colors {
  const enabled = isTTY && !("NO_COLOR" in env) && env.TERM !== "dumb";
  return createColors(enabled);
}
