// Loaded with `node --import`: records every module URL the process resolves,
// so tests can prove what a verb does (and does not) load at start-up.
import { register } from "node:module";

register(new URL("./record-imports-hooks.mjs", import.meta.url), {
  data: { log: process.env.BERTH_TEST_IMPORT_LOG },
});
