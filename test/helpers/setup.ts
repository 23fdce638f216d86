import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isolatedEnv } from "./repo.js";

// In-process verb tests spawn git with this process's environment: isolate it
// from the developer's git config exactly as the spawned binaries are.
const home = mkdtempSync(join(tmpdir(), "berth-home-"));
const isolated = isolatedEnv(home);
for (const key of Object.keys(process.env)) {
  // BERTH_FUZZ_* are the randomized suite's own knobs (test/reliability), and
  // BERTH_GOLDEN_UPDATE the golden test's (test/golden), not berth's.
  if (key.startsWith("BERTH_FUZZ_") || key === "BERTH_GOLDEN_UPDATE") continue;
  if (key.startsWith("GIT_") || key.startsWith("BERTH_")) delete process.env[key];
}
Object.assign(process.env, isolated);
