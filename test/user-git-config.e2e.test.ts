import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installFakeGpg } from "./helpers/fake-gpg.js";
import {
  makeTwoMachines,
  PUBLISHING_CONFIG,
  startWithCommit,
  type TwoMachines,
} from "./helpers/remote.js";

/**
 * berth reads and writes git under the user's own settings, not the empty
 * config the other tests use: each setting below once changed what a berth
 * verb read or did (merge.ff, log.showSignature, grep's output, submodule
 * fetches), or changes output that berth parses. The whole road runs under
 * them at once: start, gate, update, accept with a push, and the remote
 * awaits that read the notes.
 */

function userConfig(gpg: string): string {
  return `[user]
	signingKey = fake
[gpg]
	program = ${gpg}
[commit]
	gpgSign = true
	verbose = true
[log]
	showSignature = true
	decorate = full
	abbrevCommit = true
[format]
	pretty = oneline
[color]
	ui = always
[column]
	ui = always
[grep]
	lineNumber = true
	column = true
[merge]
	ff = only
	conflictStyle = zdiff3
	log = true
[status]
	short = true
	branch = true
	showUntrackedFiles = no
[diff]
	noprefix = true
	renames = copies
[core]
	abbrev = 12
[branch]
	autoSetupMerge = always
	sort = -committerdate
[push]
	default = nothing
[fetch]
	recurseSubmodules = true
`;
}

let machines: TwoMachines | undefined;
afterEach(() => {
  machines?.cleanup();
  machines = undefined;
});

describe("berth under a user's git settings", () => {
  it("starts, gates, updates by a merge, lands by a push and awaits from the other clone", async () => {
    const m = makeTwoMachines(PUBLISHING_CONFIG);
    machines = m;
    const gpg = installFakeGpg(m.one.dir.path);
    const global = join(m.one.dir.path, "user.gitconfig");
    writeFileSync(global, userConfig(gpg));
    // Every process from here (the test's git and berth's) reads it; the clones sign.
    m.one.dir.env.GIT_CONFIG_GLOBAL = global;
    for (const clone of [m.one, m.two]) clone.git(["config", "--unset", "commit.gpgsign"]);

    const x = await startWithCommit(m, m.one, "x");
    expect(m.one.git(["log", "-1", "--format=%H", x.tip])).toContain("Good signature");
    // The trunk moves on clone two: x needs a merge, which merge.ff=only would refuse.
    m.two.write("two.txt", "two\n");
    m.two.commit("from clone two");
    m.two.git(["push", "-q", "origin", "main"]);
    m.one.git(["pull", "-q", "--ff-only", "origin", "main"]);
    const update = await m.berth(["update", "--json"], x.path);
    expect(update.code, update.stdout + update.stderr).toBe(0);
    expect(update.json.data.fast_forward).toBe(false);

    const gate = await m.berth(["gate", "--json"], x.path);
    expect(gate.code, gate.stdout + gate.stderr).toBe(0);
    const tip = m.one.git(["rev-parse", "HEAD"], x.path);
    m.one.git(["push", "-q", "origin", x.branch], x.path);
    const green = await m.berth(
      ["await", "--green", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(green.code, green.stdout + green.stderr).toBe(0);
    expect(green.json.data).toMatchObject({ met: true, met_by: "receipt", tip });

    const remote = await m.berth(["status", "--remote", "--json"], m.two.path);
    expect(remote.code, remote.stdout + remote.stderr).toBe(0);
    expect(remote.json.data.remote_refs).toEqual([
      { remote: "origin", branch: x.branch, tip, landed: false, green: true },
    ]);

    const status = await m.berth(["status", "--json"]);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.json.data.worktrees.find((w: { id: string }) => w.id === x.id)).toMatchObject({
      clean: true,
      changed_files: 0,
      ahead: 2,
      behind: 0,
      receipt: "honored",
    });

    const accept = await m.berth(["accept", x.id, "--yes", "--json"]);
    expect(accept.code, accept.stdout + accept.stderr).toBe(0);
    expect(m.one.git(["--git-dir", m.bare, "rev-parse", "main"])).toBe(tip);
    const landed = await m.berth(
      ["await", "--landed", x.branch, "--remote", "--timeout", "0", "--json"],
      m.two.path,
    );
    expect(landed.code, landed.stdout + landed.stderr).toBe(0);
    expect(landed.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: tip });
  });
});
