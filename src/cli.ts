#!/usr/bin/env node
import { VERSION } from "./version.js";

/**
 * The entry point. `berth --version` is answered here, before anything else
 * is loaded: compiling commander and declaring every verb cost tens of
 * milliseconds, more than the whole budget for it (spec section 10). A plain
 * `berth status` starts its git processes here, so that they run while the
 * program is declared and parsed and the verb set up (core/fleet/status-reads.ts;
 * bundled, both imports are the one core file). Everything else is cli-run.ts.
 */
const args = process.argv.slice(2);
// Only what cannot turn `status` into a refusal or its help: then the reads are surely wanted.
const STATUS_FLAGS = new Set(["--json", "--local", "--all", "--debug"]);

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander printed for it, and its exit: 0, even if the reader has gone.
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
} else {
  const [verb = "", ...rest] = args;
  if (["status", "ls", "list"].includes(verb) && rest.every((arg) => STATUS_FLAGS.has(arg))) {
    (await import("./core/fleet/status-reads.js")).startStatusReads(process.cwd());
  }
  await (await import("./cli-run.js")).main(process.argv);
}
