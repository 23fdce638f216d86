import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, repoAt, runBerth, type TestRepo } from "./repo.js";

/**
 * Two machines sharing one remote, all on the local disk: a bare repository
 * (`remote.git`) and two clones of it (`one`, `two`), each with its own fleet
 * folder. The config (berth.toml) is committed before the clones are made.
 */
export interface TwoMachines {
  bare: string;
  one: TestRepo;
  two: TestRepo;
  /** Runs the built berth in `cwd` (default clone one's main checkout). */
  berth(args: string[], cwd?: string): ReturnType<typeof runBerth>;
  cleanup(): void;
}

export const REMOTE_CONFIG = '[remote]\nname = "origin"\n\n[logbook]\nenabled = false\n';

/** REMOTE_CONFIG that also publishes green receipts as notes, with one check to gate. */
export const PUBLISHING_CONFIG = `[remote]
name = "origin"
publish_receipts = true

[gate]
checks = [{ name = "ok", run = "true" }]

[logbook]
enabled = false
`;

export function makeTwoMachines(config = REMOTE_CONFIG): TwoMachines {
  const seed = makeRepo({ name: "seed", config });
  const dir = seed.dir;
  const bare = join(dir.path, "remote.git");
  seed.git(["clone", "-q", "--bare", seed.path, bare]);
  const clone = (name: string): TestRepo => {
    const path = join(dir.path, name);
    seed.git(["clone", "-q", bare, path]);
    const repo = repoAt(path, dir);
    repo.git(["config", "gc.auto", "0"]);
    repo.git(["config", "commit.gpgsign", "false"]);
    return repo;
  };
  const one = clone("one");
  const two = clone("two");
  return {
    bare,
    one,
    two,
    berth: (args, cwd = one.path) => runBerth(args, { cwd, env: dir.env }),
    cleanup: dir.cleanup,
  };
}

/** `berth start <name> --json` in `repo`, then one commit in the new berth; returns its data. */
export async function startWithCommit(
  m: TwoMachines,
  repo: TestRepo,
  name: string,
): Promise<{ id: string; branch: string; path: string; tip: string }> {
  const run = await m.berth(["start", name, "--json"], repo.path);
  if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
  const data = run.json.data as { id: string; branch: string; path: string };
  repo.write(`${name}.txt`, `${name}\n`, data.path);
  const tip = repo.commit(`work on ${name}`, data.path);
  return { ...data, tip };
}

/**
 * A pre-receive hook on the bare remote, as a protected branch on a forge:
 * while `on()` holds it declines any push that updates `ref`, saying
 * `message`, and records the commit each declined push offered; `off()` lets
 * pushes through again.
 */
export function declinePushesTo(m: TwoMachines, ref: string, message: string) {
  const flag = join(m.bare, "declining");
  const seen = join(m.bare, "declined-pushes");
  const hook = join(m.bare, "hooks", "pre-receive");
  writeFileSync(
    hook,
    `#!/bin/sh
while read old new ref; do
  if [ "$ref" = "${ref}" ] && [ -e "${flag}" ]; then
    echo "$new" >> "${seen}"
    echo "${message}" >&2
    exit 1
  fi
done
exit 0
`,
  );
  chmodSync(hook, 0o755);
  return {
    on: () => writeFileSync(flag, ""),
    off: () => rmSync(flag, { force: true }),
    declined: () =>
      existsSync(seen) ? readFileSync(seen, "utf8").split("\n").filter(Boolean) : [],
  };
}
