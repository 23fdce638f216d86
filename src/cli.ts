#!/usr/bin/env node
import { VERSION } from "./version.js";

/**
 * The entry point. `berth --version` is answered here, before anything else
 * is loaded: compiling the rest costs tens of milliseconds, more than the
 * whole budget for it (spec section 10). A plain `berth status` runs from
 * cli-status.ts without loading the parser; it starts its git processes
 * first, so that they run while the verb is set up. Everything else is
 * parsed by cli-run.ts (bundled: cli-status is in the core file, cli-run a
 * chunk of its own; scripts/bundle.mjs).
 */
const args = process.argv.slice(2);

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander printed for it, and its exit: 0, even if the reader has gone.
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
} else {
  const { plainStatusOptions, runPlainStatus } = await import("./cli-status.js");
  const status = plainStatusOptions(args);
  if (status !== null) await runPlainStatus(status);
  await (await import("./cli-run.js")).main(process.argv);
}
