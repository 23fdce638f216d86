import { afterEach, describe, expect, it } from "vitest";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * A SHA-256 repository (`git init --object-format=sha256`): its object ids
 * are 64 hex digits, and every record berth writes with one (the landing
 * log, await's continuations) must read back as it does with SHA-1's 40.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

const CONFIG = '[gate]\nchecks = [{ name = "ok", run = "true" }]\n';

describe("a SHA-256 repository", () => {
  it("lands a gated berth, resumes a wait and answers await --landed from the landing log", async () => {
    const r = makeRepo({ config: CONFIG, objectFormat: "sha256" });
    repo = r;
    const berth = (args: string[], cwd = r.path) => runBerth(args, { cwd, env: r.env });
    const start = await berth(["start", "x", "--json"]);
    expect(start.code, start.stdout + start.stderr).toBe(0);
    const { id, path, branch } = start.json.data;
    r.write("x.txt", "x\n", path);
    const tip = r.commit("x", path);
    expect(tip).toMatch(/^[0-9a-f]{64}$/);
    expect((await berth(["gate", "--json"], path)).code).toBe(0);

    const waited = await berth(["await", "--landed", id, "--timeout", "0", "--json"]);
    expect(waited.code).toBe(124);
    const handle = waited.json.data.resume;
    const accept = await berth(["accept", id, "--yes", "--json"]);
    expect(accept.code, accept.stdout + accept.stderr).toBe(0);

    const resumed = await berth(["await", "--resume", handle, "--timeout", "0", "--json"]);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json.data).toMatchObject({ met: true, met_by: "landed", landed_commit: tip });
    // The berth and its branch are gone: only the landing log can answer now.
    const landed = await berth(["await", "--landed", id, "--timeout", "0", "--json"]);
    expect(landed.code, landed.stdout + landed.stderr).toBe(0);
    expect(landed.json.data.landing).toMatchObject({ branch, tip });
    const status = await berth(["status", "--json"]);
    expect(status.json.data.landings).toEqual([expect.objectContaining({ id, branch, tip })]);
  });
});
