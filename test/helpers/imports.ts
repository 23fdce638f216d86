import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BERTH_BIN, PROJECT_ROOT } from "./repo.js";

/**
 * The modules a run loads, each once, in load order. dist/cli.cjs is a bundle (scripts/bundle.mjs): each
 * loaded bundle file stands for the modules dist/bundle-meta.json says it
 * holds, so these checks see through the bundling to the code itself.
 */
export function loadedModules(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  okStatus = 0,
  /** false: the bundle files themselves, in load order, not the modules they hold. */
  expand = true,
): string[] {
  const log = join(cwd, "..", `imports-${args.join("-")}.log`);
  try {
    execFileSync(
      process.execPath,
      ["--import", join(PROJECT_ROOT, "test/helpers/record-imports.mjs"), BERTH_BIN, ...args],
      { cwd, env: { ...env, BERTH_TEST_IMPORT_LOG: log }, stdio: ["ignore", "pipe", "pipe"] },
    );
    if (okStatus !== 0) throw new Error(`expected exit ${okStatus}, got 0`);
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status !== okStatus) throw error;
  }
  const meta = JSON.parse(readFileSync(join(PROJECT_ROOT, "dist/bundle-meta.json"), "utf8")) as {
    outputs: Record<string, string[]>;
  };
  // A file can be recorded twice: as required, and as resolved by the module loader's hook.
  const urls = new Set(readFileSync(log, "utf8").split("\n").filter(Boolean));
  return [...urls].flatMap((url) => {
    if (!url.startsWith("file:")) return [url];
    const path = fileURLToPath(url);
    if (!expand) return [path];
    const inputs = meta.outputs[relative(PROJECT_ROOT, path)];
    return inputs === undefined ? [path] : inputs.map((input) => resolve(PROJECT_ROOT, input));
  });
}
