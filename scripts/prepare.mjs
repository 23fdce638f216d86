// npm's `prepare`: after `npm ci` / `npm install` in a clone it builds, which
// is what the README quickstart (`npm ci && node dist/cli.cjs tour`) relies on.
// npm also runs it for `npm pack` and `npm publish`, right after `prepack`,
// which has just built the package: a second 45-second build would change
// nothing, so it is skipped there.
import { spawnSync } from "node:child_process";

const command = process.env.npm_command;
if (command === "pack" || command === "publish") {
  console.error(`prepare: skipped, prepack built the package for npm ${command}`);
  process.exit(0);
}
const build = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
process.exit(build.status ?? 1);
