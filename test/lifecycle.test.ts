import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  berthBranches,
  fleetSnapshot,
  ledgerFiles,
  markerLines,
  startBerth,
  worktreePaths,
} from "./helpers/fleet.js";
import { makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * Resources, setup and teardown end to end, through the built binary:
 * start creates through the ledger, every removal path destroys through it.
 */

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** A resource whose create/destroy append a line to $MARKER (outside the repository). */
function resource(name: string, extra: { create?: string; destroy?: string; more?: string } = {}) {
  const create = extra.create ?? `echo "create ${name} $BERTH_ID $BERTH_PORT" >> "$MARKER"`;
  const destroy = extra.destroy ?? `echo "destroy ${name} $BERTH_ID $BERTH_PORT" >> "$MARKER"`;
  return `[worktree.resources.${name}]\ncreate = '${create}'\ndestroy = '${destroy}'\n${extra.more ?? ""}\n`;
}

function setUp(
  config: string,
  name?: string,
): { repo: TestRepo; marker: string; env: NodeJS.ProcessEnv } {
  repo = makeRepo({ config, ...(name === undefined ? {} : { name }) });
  const marker = join(repo.dir.path, "marker");
  return { repo, marker, env: { ...repo.env, MARKER: marker } };
}

describe("start and drop with a resource", () => {
  it("creates it once with BERTH_ID and BERTH_PORT, drop destroys it once, the ledger ends empty", async () => {
    const { repo, marker, env } = setUp(resource("db"));
    const berth = await startBerth(repo, "with db", env);
    expect(markerLines(marker)).toEqual([`create db ${berth.id} ${berth.port}`]);

    const [file] = ledgerFiles(repo);
    expect(file).toMatch(/\/db\.json$/);
    const entry = JSON.parse(
      readFileSync(join(repo.path, ".git/berth/ledger", file as string), "utf8"),
    );
    expect(entry).toMatchObject({
      version: 1,
      id: berth.id,
      path: berth.path,
      branch: berth.branch,
      resource: "db",
      gc: true,
      destroy: `echo "destroy db $BERTH_ID $BERTH_PORT" >> "$MARKER"`,
    });
    expect(entry.env).toMatchObject({
      BERTH_ID: berth.id,
      BERTH_PORT: String(berth.port),
      BERTH_RESOURCE: "db",
      BERTH_REPO: repo.path,
      BERTH_PATH: berth.path,
    });

    const drop = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(drop.code).toBe(0);
    expect(drop.json.data).toMatchObject({
      resources_destroyed: ["db"],
      worktree_removed: true,
      branch_deleted: true,
    });
    expect(markerLines(marker)).toEqual([
      `create db ${berth.id} ${berth.port}`,
      `destroy db ${berth.id} ${berth.port}`,
    ]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(existsSync(berth.path)).toBe(false);
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(berthBranches(repo)).toEqual([]);
  });

  it("creates in file order and destroys in reverse", async () => {
    const { repo, marker, env } = setUp(
      `${resource("first")}${resource("second")}${resource("third")}`,
    );
    const berth = await startBerth(repo, "order", env);
    const drop = await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: repo.path, env });
    expect(drop.code).toBe(0);
    expect(markerLines(marker).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
      "create first",
      "create second",
      "create third",
      "destroy third",
      "destroy second",
      "destroy first",
    ]);
  });
});

describe("a failing required create", () => {
  it("refuses the start and leaves no worktree, branch or ledger entry; earlier resources are destroyed", async () => {
    const { repo, marker, env } = setUp(
      `${resource("early")}${resource("broken", { create: 'echo "no server here" >&2; exit 7' })}${resource("late")}`,
    );
    const run = await runBerth(["start", "doomed"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("create resource broken");
    expect(run.stderr).toContain("no server here");
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(berthBranches(repo)).toEqual([]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(
      readdirSync(repo.dir.path).some(
        (n) => n.endsWith(".worktrees") && readdirSync(join(repo?.dir.path ?? "", n)).length > 0,
      ),
    ).toBe(false);
    const lines = markerLines(marker).map((l) => l.split(" ").slice(0, 2).join(" "));
    // The failed resource's own destroy runs too (its create may have half-made it); "late" never starts.
    expect(lines).toEqual(["create early", "destroy broken", "destroy early"]);
  });

  it("only warns when the resource is not required, and records nothing for it", async () => {
    const { repo, marker, env } = setUp(
      `${resource("optional", { create: "exit 3", more: "required = false" })}${resource("db")}`,
    );
    const run = await runBerth(["start", "partly", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(0);
    expect(run.json.hints.join("\n")).toContain("resource optional: create failed (exit 3)");
    expect(ledgerFiles(repo).map((f) => f.split("/")[1])).toEqual(["db.json"]);
    expect(markerLines(marker).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
      "destroy optional",
      "create db",
    ]);
  });
});

describe("a failing destroy", () => {
  it("stops the drop with teardown_failed, keeps checkout and ledger entry; the recorded command, fixed, finishes it", async () => {
    const { repo, marker, env } = setUp(
      resource("db", { destroy: 'echo "cannot reach db" >&2; exit 5' }),
    );
    const berth = await startBerth(repo, "sticky", env);
    const before = ledgerFiles(repo);
    expect(before).toHaveLength(1);

    const failed = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(failed.code).toBe(1);
    expect(failed.json.error.code).toBe("teardown_failed");
    expect(failed.json.error.message).toContain("resource db");
    expect(failed.json.error.message).toContain("cannot reach db");
    expect(existsSync(berth.path)).toBe(true);
    expect(worktreePaths(repo)).toContain(berth.path);
    expect(berthBranches(repo)).toEqual([berth.branch]);
    expect(ledgerFiles(repo)).toEqual(before);

    // berth runs the recorded command (spec section 7): a changed berth.toml changes nothing…
    writeFileSync(join(repo.path, "berth.toml"), resource("db"));
    const still = await runBerth(["worktree", "drop", berth.id, "--yes", "--json"], {
      cwd: repo.path,
      env,
    });
    expect(still.code).toBe(1);
    expect(still.json.error.message).toContain("cannot reach db");
    // …and the failure names the ledger entry that holds it, which is where it is fixed.
    const file = join(repo.path, ".git/berth/ledger", before[0] as string);
    expect(still.json.error.message).toContain(file);
    const entry = JSON.parse(readFileSync(file, "utf8"));
    entry.destroy = `echo "destroy db $BERTH_ID $BERTH_PORT" >> "$MARKER"`;
    writeFileSync(file, JSON.stringify(entry));
    const fixed = await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: repo.path, env });
    expect(fixed.code).toBe(0);
    expect(markerLines(marker)).toEqual([
      `create db ${berth.id} ${berth.port}`,
      `destroy db ${berth.id} ${berth.port}`,
    ]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(existsSync(berth.path)).toBe(false);
    expect(berthBranches(repo)).toEqual([]);
  });
});

describe("values reach commands only through the environment", () => {
  it("runs with a repository folder full of shell metacharacters and executes nothing from it", async () => {
    const record = `printf "%s|%s|%s\\n" "$BERTH_RESOURCE" "$BERTH_PATH" "$BERTH_REPO" >> "$MARKER"`;
    const { repo, marker, env } = setUp(
      `[worktree.resources.db]\ncreate = '${record}'\ndestroy = '${record}'\n` +
        `[worktree.setup]\nsteps = ['test -d "$BERTH_PATH"']\n`,
      "r$(touch pwned)`touch pwned2`;touch pwned3",
    );
    const berth = await startBerth(repo, "meta", env);
    expect(berth.path).toContain("r$(touch pwned)");
    const drop = await runBerth(["worktree", "drop", berth.id, "--yes"], { cwd: repo.path, env });
    expect(drop.code).toBe(0);
    const lines = markerLines(marker);
    expect(lines).toEqual([`db|${berth.path}|${repo.path}`, `db|${berth.path}|${repo.path}`]);
    const everywhere = [repo.dir.path, repo.path, join(repo.dir.path, "home"), process.cwd()];
    for (const dir of everywhere) {
      for (const name of ["pwned", "pwned2", "pwned3"])
        expect(existsSync(join(dir, name))).toBe(false);
    }
  });
});

describe("setup steps and ensure", () => {
  it("runs steps, then resource ensure, then setup ensure, in the berth", async () => {
    const log = `>> "$MARKER"`;
    const { repo, marker, env } = setUp(
      `${resource("db", { more: `ensure = 'echo "ensure db $(basename "$PWD")" ${log}'` })}` +
        `[worktree.setup]\nsteps = ['echo "step $(basename "$PWD")" ${log}']\nensure = ['echo "setup-ensure $BERTH_ID" ${log}']\n`,
    );
    const berth = await startBerth(repo, "steps", env);
    expect(markerLines(marker)).toEqual([
      `create db ${berth.id} ${berth.port}`,
      `step ${berth.id}`,
      `ensure db ${berth.id}`,
      `setup-ensure ${berth.id}`,
    ]);
  });

  it("undoes everything this run created when a setup step fails, naming the step", async () => {
    const { repo, marker, env } = setUp(
      `${resource("db")}[worktree.setup]\nsteps = ['true', 'echo "npm exploded" >&2; exit 4', 'echo never >> "$MARKER"']\n`,
    );
    const run = await runBerth(["start", "setup-fails", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.message).toContain("setup step 2");
    expect(run.json.error.message).toContain("npm exploded");
    expect(run.json.data.failed_step).toBe("setup step 2");
    // The retry starts the same berth: its name is kept.
    expect(run.json.error.next).toBe("berth start setup-fails --from main");
    expect(markerLines(marker).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
      "create db",
      "destroy db",
    ]);
    expect(worktreePaths(repo)).toEqual([repo.path]);
    expect(berthBranches(repo)).toEqual([]);
    expect(ledgerFiles(repo)).toEqual([]);
  });

  it("keeps the berth (and its ledger) when undoing a failed start cannot destroy a resource", async () => {
    const { repo, env } = setUp(
      `${resource("db", { destroy: "exit 9" })}[worktree.setup]\nsteps = ['exit 4']\n`,
    );
    const run = await runBerth(["start", "stuck", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("teardown_failed");
    expect(run.json.error.message).toContain("setup step 1");
    expect(worktreePaths(repo)).toHaveLength(2);
    expect(ledgerFiles(repo)).toHaveLength(1);
  });
});

describe("worktree teardown and worktree setup", () => {
  it("teardown destroys the resources and keeps the checkout; setup creates them again and ensures", async () => {
    const { repo, marker, env } = setUp(
      `${resource("db", { more: `ensure = 'echo "ensure db" >> "$MARKER"'` })}`,
    );
    const berth = await startBerth(repo, "cycle", env);
    const refused = await runBerth(["worktree", "teardown"], { cwd: berth.path, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("confirmation");
    expect(ledgerFiles(repo)).toHaveLength(1);

    const down = await runBerth(["worktree", "teardown", "--yes", "--json"], {
      cwd: berth.path,
      env,
    });
    expect(down.code).toBe(0);
    expect(down.json.data.destroyed).toEqual(["db"]);
    expect(ledgerFiles(repo)).toEqual([]);
    expect(existsSync(berth.path)).toBe(true);
    expect(berthBranches(repo)).toEqual([berth.branch]);

    // A resource declared after the berth started is created by setup too.
    writeFileSync(
      join(repo.path, "berth.toml"),
      `${readFileSync(join(repo.path, "berth.toml"), "utf8")}${resource("cache")}`,
    );
    const up = await runBerth(["worktree", "setup", "--json"], { cwd: berth.path, env });
    expect(up.code).toBe(0);
    expect(up.json.data.created).toEqual(["db", "cache"]);
    expect(
      ledgerFiles(repo)
        .map((f) => f.split("/")[1])
        .sort(),
    ).toEqual(["cache.json", "db.json"]);

    const again = await runBerth(["worktree", "setup", "--json"], { cwd: berth.path, env });
    expect(again.code).toBe(0);
    expect(again.json.data).toMatchObject({ created: [], ensured: ["db"] });
    expect(markerLines(marker).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
      "create db",
      "ensure db",
      "destroy db",
      "create db",
      "create cache",
      "ensure db",
    ]);
  });

  it("refuses outside a berth", async () => {
    const { repo, env } = setUp(resource("db"));
    const before = fleetSnapshot(repo);
    const run = await runBerth(["worktree", "setup", "--json"], { cwd: repo.path, env });
    expect(run.code).toBe(1);
    expect(run.json.error.code).toBe("precondition_failed");
    expect(fleetSnapshot(repo)).toBe(before);
  });
});

describe("env files", () => {
  it("writes the port and inherited keys into ignored env files only, so the berth starts clean", async () => {
    const { repo, env } = setUp(
      `[worktree]\nenv_files = [".env", ".env.local", "config.env"]\ninherit_env = ["API_KEY", "ABSENT"]\n`,
    );
    repo.write(".gitignore", ".env\n.env.local\n");
    repo.write("config.env", "TRACKED=1\n");
    repo.commit("ignore env files");
    repo.write(".env", 'API_KEY="s3cret value"\nOTHER=not-copied\n');
    repo.write(".env.local", "API_KEY=local-wins\n");
    const berth = await startBerth(repo, "envy", env);
    const dotenv = readFileSync(join(berth.path, ".env"), "utf8");
    expect(dotenv).toContain(`BERTH_PORT=${berth.port}`);
    expect(dotenv).toContain(`BERTH_ID=${berth.id}`);
    expect(dotenv).toContain("API_KEY=local-wins");
    expect(dotenv).not.toContain("OTHER");
    expect(readFileSync(join(berth.path, "config.env"), "utf8")).toBe("TRACKED=1\n");
    expect(repo.git(["status", "--porcelain"], berth.path)).toBe("");
    expect(berth.run.json.hints.join("\n")).toContain("config.env");
    expect(berth.run.json.hints.join("\n")).toContain("ABSENT");
  });

  it("copies an inherited value byte for byte, in whatever encoding the main checkout's file has", async () => {
    const { repo, env } = setUp(`[worktree]\ninherit_env = ["PASSWORD"]\n`);
    repo.write(".gitignore", ".env\n");
    repo.commit("ignore env files");
    // Latin-1 "café": the byte 0xe9 is no UTF-8, and must not become U+FFFD.
    const value = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    writeFileSync(
      join(repo.path, ".env"),
      Buffer.concat([Buffer.from("PASSWORD="), value, Buffer.from("\n")]),
    );
    const berth = await startBerth(repo, "latin", env);
    const dotenv = readFileSync(join(berth.path, ".env"));
    const line = dotenv.subarray(dotenv.indexOf("PASSWORD="));
    expect(line.subarray(0, line.indexOf(0x0a))).toEqual(
      Buffer.concat([Buffer.from("PASSWORD="), value]),
    );
    expect(dotenv.toString("latin1")).toContain(`BERTH_ID=${berth.id}\n`);
  });
});

describe("a file where the worktree root goes", () => {
  it("refuses the start before anything runs, naming the file and the setting; the root configured under it too", async () => {
    const { repo, marker, env } = setUp(resource("db"));
    const root = `${repo.path}.worktrees`;
    writeFileSync(root, "not a folder\n");
    const before = repo.git(["for-each-ref"]);
    const start = await runBerth(["start", "x", "--json"], { cwd: repo.path, env });
    expect(start.code).toBe(1);
    expect(start.json.error).toMatchObject({
      code: "precondition_failed",
      message: `The worktree root ${root} is a file, not a folder: move it aside, or set [worktree].root in berth.toml to a folder.`,
    });
    writeFileSync(
      join(repo.path, "berth.toml"),
      `[worktree]\nroot = "../repo.worktrees/berths"\n${resource("db")}`,
    );
    const under = await runBerth(["start", "x", "--json"], { cwd: repo.path, env });
    expect(under.json.error.message).toBe(
      `The worktree root ${root}/berths is under ${root}, a file, not a folder: move it aside, or set [worktree].root in berth.toml to a folder.`,
    );
    expect(existsSync(marker)).toBe(false);
    expect(repo.git(["for-each-ref"])).toBe(before);
    expect(worktreePaths(repo)).toEqual([repo.path]);
  });
});

describe("a worktree root inside the main checkout", () => {
  it("is said when git does not ignore it, with a pattern that does; not once it is ignored", async () => {
    const { repo, env } = setUp(`[worktree]\nroot = "b[1]*"\n`);
    const start = await runBerth(["start", "x", "--json"], { cwd: repo.path, env });
    expect(start.code).toBe(0);
    const hint = (start.json.hints as string[]).find((h) => h.startsWith("Berths are made in"));
    expect(hint).toBe(
      "Berths are made in b[1]*, inside the main checkout, and git does not ignore them: the main checkout shows each as untracked, and git add -A there would add it as an embedded repository. Add /b\\[1]\\*/ to .gitignore (or .git/info/exclude).",
    );
    expect(repo.git(["status", "--porcelain"])).toBe("?? b[1]*/");
    const pattern = /Add (\S+) to/.exec(hint ?? "")?.[1] ?? "";
    writeFileSync(join(repo.path, ".git", "info", "exclude"), `${pattern}\n`);
    expect(repo.git(["status", "--porcelain"])).toBe("");
    const again = await runBerth(["start", "y", "--json"], { cwd: repo.path, env });
    expect(again.code).toBe(0);
    expect(again.json.hints).toEqual([]);
  });
});
