import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { worktreePaths } from "./helpers/fleet.js";
import { logbookLines } from "./helpers/logbook.js";
import { BERTH_BIN, makeRepo, runBerth, type TestRepo } from "./helpers/repo.js";

/**
 * `berth desk` in a real terminal: tmux runs the built binary, send-keys
 * types, capture-pane reads the screen. A three-stage train; the desk
 * reclaims its first stage after one declined and one confirmed `r`, keeps
 * the branch ref, and quits on `q`. The desk runs without CI in its
 * environment: ink renders statically (no redraw) when it sees CI.
 */

// Generous: a loaded 2-core machine runs other suites beside this one.
const SCREEN_DEADLINE_MS = 30_000;

let repo: TestRepo | undefined;
let socket: string | undefined;
afterEach(() => {
  if (socket !== undefined) {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    // tmux leaves its socket file behind when the server ends with its last session.
    const uid = process.getuid?.() ?? 0;
    rmSync(join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${uid}`, socket), { force: true });
  }
  socket = undefined;
  repo?.cleanup();
  repo = undefined;
});

function requireTmux(): void {
  const probe = spawnSync("tmux", ["-V"], { stdio: "ignore" });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error("tmux is not installed: run bash .ci/setup-tmux.sh (CI runs it from .ci/run)");
  }
}

/** The environment of the tmux server, and so of the desk: no CI markers, a real terminal type. */
function terminalEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (key === "CI" || key === "CONTINUOUS_INTEGRATION" || key.startsWith("CI_")) continue;
    if (key === "TMUX" || key === "TMUX_PANE") continue;
    out[key] = value;
  }
  return { ...out, TERM: "xterm-256color" };
}

class Terminal {
  constructor(
    private readonly sock: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  tmux(args: string[]): { status: number | null; stdout: string } {
    const run = spawnSync("tmux", ["-L", this.sock, ...args], { env: this.env, encoding: "utf8" });
    return { status: run.status, stdout: run.stdout ?? "" };
  }

  screen(): string {
    return this.tmux(["capture-pane", "-p", "-t", "desk"]).stdout;
  }

  keys(...keys: string[]): void {
    const sent = this.tmux(["send-keys", "-t", "desk", ...keys]);
    if (sent.status !== 0) throw new Error(`tmux send-keys ${keys.join(" ")} failed`);
  }

  /** Polls the screen until `test` holds; fails with the last screen after the deadline. */
  async waitFor(what: string, test: (screen: string) => boolean): Promise<string> {
    const deadline = Date.now() + SCREEN_DEADLINE_MS;
    let last = "";
    while (Date.now() < deadline) {
      last = this.screen();
      if (test(last)) return last;
      await sleep(150);
    }
    throw new Error(`the screen never showed ${what}; last screen:\n${last}`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The row the desk marks as selected ("> " at the start of the line). */
function selectedLine(screen: string): string | undefined {
  return screen.split("\n").find((line) => line.startsWith("> "));
}

interface Berth {
  id: string;
  branch: string;
  path: string;
}

async function startStage(r: TestRepo, name: string, from?: Berth): Promise<Berth> {
  const args = ["start", name, ...(from ? ["--from", from.branch] : []), "--json"];
  const run = await runBerth(args, { cwd: r.path, env: r.env });
  if (run.code !== 0) throw new Error(`start ${name}: ${run.stdout}${run.stderr}`);
  const berth = run.json.data as Berth;
  r.write(`${name}.txt`, `${name}\n`, berth.path);
  r.commit(name, berth.path);
  return berth;
}

describe("berth desk in a real terminal", () => {
  it("reclaims a contained stage only after y, keeps its branch ref, and quits on q", async () => {
    requireTmux();
    repo = makeRepo();
    const a = await startStage(repo, "a");
    const b = await startStage(repo, "b", a);
    await startStage(repo, "c", b);
    const r = repo;
    const refs = () => r.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
    const refsBefore = refs();
    const worktreesBefore = worktreePaths(r);

    socket = `berth-test-${randomBytes(6).toString("hex")}`;
    const env = terminalEnv(r.env);
    const exitFile = join(r.dir.path, "desk-exit");
    const script = join(r.dir.path, "desk.sh");
    writeFileSync(
      script,
      `cd '${r.path}' || exit 9\nenv -u CI TERM=xterm-256color '${process.execPath}' '${BERTH_BIN}' desk\necho "$?" > '${exitFile}'\n`,
    );
    const term = new Terminal(socket, env);
    const started = term.tmux([
      "new-session",
      "-d",
      "-s",
      "desk",
      "-x",
      "160",
      "-y",
      "50",
      `sh '${script}'`,
    ]);
    expect(started.status).toBe(0);

    // The groups, in decision order, with the two spent stages contained.
    const first = await term.waitFor("the grouped fleet", (s) =>
      /ready to accept \(\d+\)[\s\S]*working \(1\)[\s\S]*contained \(2\)[\s\S]*needs attention \(0\)[\s\S]*kept refs \(0\)/.test(
        s,
      ),
    );
    expect(first).toContain(`contained in ${b.branch} (+1)`);

    // Move the selection to stage a.
    for (let i = 0; i < 6 && !selectedLine(term.screen())?.includes(a.id); i++) {
      const before = selectedLine(term.screen());
      term.keys("j");
      await term.waitFor("the selection move", (s) => selectedLine(s) !== before);
    }
    expect(selectedLine(term.screen())).toContain(a.id);

    // r: the exact command and what is kept and destroyed; Enter answers No.
    term.keys("r");
    const confirm = await term.waitFor("the reclaim confirmation", (s) => s.includes("[y/N]"));
    expect(confirm).toContain(`$ berth worktree reclaim ${a.id} --yes`);
    expect(confirm).toContain(`keeps:     the branch refs ${a.branch}`);
    expect(confirm).toContain("destroys:  their checkouts and per-berth state, the gate receipt");
    expect(confirm).toContain(`Reclaim ${a.id} (branch ${a.branch} is kept)? [y/N]`);
    term.keys("Enter");
    await term.waitFor("the declined answer", (s) => s.includes("Not confirmed; nothing changed."));
    expect(refs()).toBe(refsBefore);
    expect(worktreePaths(r)).toEqual(worktreesBefore);
    expect(existsSync(a.path)).toBe(true);

    // r, then y: the checkout goes, every ref (a's included) stays.
    term.keys("r");
    await term.waitFor("the reclaim confirmation again", (s) => s.includes("[y/N]"));
    term.keys("y");
    await term.waitFor("the reclaim's result", (s) =>
      s.includes(`reclaimed (branch ${a.branch} kept)`),
    );
    expect(existsSync(a.path)).toBe(false);
    expect(worktreePaths(r)).toEqual(worktreesBefore.filter((p) => p !== a.path));
    expect(refs()).toBe(refsBefore);
    // The refresh shows a's branch as a kept ref, inside b.
    await term.waitFor("the kept ref", (s) => /kept refs \(1\)\n.*inside/.test(s));
    expect(term.screen()).toContain(`${a.branch} (+1) at`);

    // Logged like the CLI: one declined and one applied `worktree reclaim`.
    const finishes = logbookLines(r.path)
      .map((line) => JSON.parse(line))
      .filter((e) => e.event === "finish" && e.verb === "worktree reclaim");
    expect(finishes.map((e) => [e.outcome, e.error_code])).toEqual([
      ["refused", "confirmation_required"],
      ["ok", null],
    ]);

    // q: the desk exits 0 and its tmux session ends with it.
    term.keys("q");
    const deadline = Date.now() + SCREEN_DEADLINE_MS;
    while (Date.now() < deadline && !existsSync(exitFile)) await sleep(100);
    expect(existsSync(exitFile)).toBe(true);
    expect(readFileSync(exitFile, "utf8").trim()).toBe("0");
    while (Date.now() < deadline && term.tmux(["has-session", "-t", "desk"]).status === 0) {
      await sleep(100);
    }
    expect(term.tmux(["has-session", "-t", "desk"]).status).not.toBe(0);
  });
});

/** SGR parameters that color text (foreground, background, faint), as tmux's `capture-pane -e` writes them. */
function colorCodes(screen: string): string[] {
  const found: string[] = [];
  for (const match of screen.matchAll(new RegExp(`${String.fromCharCode(27)}\\[([0-9;]*)m`, "g"))) {
    const params = (match[1] ?? "").split(";");
    for (let i = 0; i < params.length; i++) {
      const p = Number(params[i]);
      if (p === 2 || (p >= 30 && p <= 37) || (p >= 40 && p <= 47) || (p >= 90 && p <= 97)) {
        found.push(String(p));
      } else if (p === 38 || p === 48) {
        found.push(params.slice(i, i + 3).join(";"));
        i += params[i + 1] === "5" ? 2 : 4;
      }
    }
  }
  return found;
}

describe("berth desk at 80x24 with fifty rows in mind", () => {
  it("wraps a long command and plan in a narrow terminal instead of cutting them", async () => {
    requireTmux();
    repo = makeRepo();
    const r = repo;
    const berth = await startStage(r, "a-berth-with-a-rather-long-name-for-a-narrow-desk");
    socket = `berth-test-${randomBytes(6).toString("hex")}`;
    const script = join(r.dir.path, "narrow.sh");
    writeFileSync(
      script,
      `cd '${r.path}' || exit 9\nenv -u CI NO_COLOR=1 TERM=xterm-256color '${process.execPath}' '${BERTH_BIN}' desk\n`,
    );
    const term = new Terminal(socket, terminalEnv(r.env));
    const width = 44;
    const size = ["-x", `${width}`, "-y", "30"];
    const started = term.tmux(["new-session", "-d", "-s", "desk", ...size, `sh '${script}'`]);
    expect(started.status).toBe(0);
    // The row itself is cut to the width (the list keeps one row per berth).
    await term.waitFor("the fleet", (s) => s.includes("working (1)"));

    term.keys("x");
    const confirm = await term.waitFor("the drop confirmation", (s) => s.includes("[y/N]"));
    const rows = confirm.split("\n");
    for (const row of rows) expect([...row].length).toBeLessThanOrEqual(width);
    // The command, pasted from its rows into a shell, is the whole command.
    const first = rows.findIndex((row) => row.startsWith("$ "));
    let last = first;
    while (rows[last]?.endsWith("\\")) last++;
    const pasted = rows
      .slice(first, last + 1)
      .join("\n")
      .slice(2);
    const words = spawnSync("sh", ["-c", `set -- ${pasted}\nprintf '%s\\n' "$@"`], {
      encoding: "utf8",
    }).stdout;
    expect(words.trimEnd().split("\n")).toEqual([
      "berth",
      "worktree",
      "drop",
      berth.id,
      "--force",
      "--yes",
    ]);
    // The plan names the whole checkout path, across rows.
    expect(confirm.replace(/\n */g, "")).toContain(berth.path);
    term.keys("Enter");
    await term.waitFor("the declined answer", (s) => s.includes("nothing changed"));
    expect(existsSync(berth.path)).toBe(true);
    term.keys("q");
  });

  it("shows the whole legend, rows in natural order, parked work, a filter, help, and honours NO_COLOR", async () => {
    requireTmux();
    repo = makeRepo();
    const r = repo;
    const bulk: Berth[] = [];
    for (const n of [10, 2, 1]) bulk.push(await startStage(r, `bulk-${n}`));
    const shelf = await startStage(r, "shelf");
    const park = await runBerth(["describe", shelf.id, "--title", "Shelved idea"], {
      cwd: r.path,
      env: r.env,
    });
    expect(park.code).toBe(0);
    expect(
      (await runBerth(["worktree", "park", shelf.id, "--yes"], { cwd: r.path, env: r.env })).code,
    ).toBe(0);
    // A folder a half-done removal left: a hint of the survey's, which the desk shows too.
    const left = join(`${r.path}.worktrees`, "ghost-0a1b2c");
    mkdirSync(left, { recursive: true });

    socket = `berth-test-${randomBytes(6).toString("hex")}`;
    const script = (name: string, env: string) => {
      const file = join(r.dir.path, `${name}.sh`);
      writeFileSync(
        file,
        `cd '${r.path}' || exit 9\nenv -u CI ${env} TERM=xterm-256color '${process.execPath}' '${BERTH_BIN}' desk\n`,
      );
      return file;
    };
    const term = new Terminal(socket, terminalEnv(r.env));
    const started = term.tmux([
      "new-session",
      "-d",
      "-s",
      "desk",
      "-x",
      "80",
      "-y",
      "24",
      `sh '${script("plain", "NO_COLOR=1")}'`,
    ]);
    expect(started.status).toBe(0);

    const screen = await term.waitFor("the fleet", (s) => s.includes("kept refs (1)"));
    const lines = screen.split("\n");
    // Natural order: bulk-1, bulk-2, bulk-10.
    const at = (b: Berth) => lines.findIndex((line) => line.includes(b.id));
    const [b10, b2, b1] = bulk as [Berth, Berth, Berth];
    expect(at(b1)).toBeGreaterThan(0);
    expect(at(b1)).toBeLessThan(at(b2));
    expect(at(b2)).toBeLessThan(at(b10));
    // The whole legend is on screen, every line within 80 columns.
    for (const key of ["j/k move", "enter detail", "/ filter", "g gate", "u update"]) {
      expect(screen).toContain(key);
    }
    for (const key of [
      "a accept",
      "r reclaim",
      "p park",
      "x drop",
      "s shell",
      "? help",
      "q quit",
    ]) {
      expect(screen).toContain(key);
    }
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    // The survey's hints under the rows, wrapped to the width like any pane.
    expect(screen.replace(/\s+/g, " ")).toContain(
      `hint: ${left} is left from a berth: git no longer knows it as a checkout`,
    );
    // Parked work, with its title and the way back.
    expect(screen).toContain(`${shelf.branch} (+1) at`);
    expect(screen).toContain('"Shelved idea": parked; resume with');

    // NO_COLOR: no color and no faint text on screen.
    const escaped = term.tmux(["capture-pane", "-e", "-p", "-t", "desk"]).stdout;
    expect(colorCodes(escaped)).toEqual([]);

    // ? shows every key; any other key closes it.
    term.keys("?");
    await term.waitFor(
      "the help",
      (s) => s.includes("keys:") && s.includes("park: tear the berth down"),
    );
    term.keys("Escape");
    await term.waitFor("the help closed", (s) => !s.includes("keys:"));

    // / filters by id: bulk-1 matches bulk-1 and bulk-10, Enter keeps it, Esc clears it.
    term.keys("/");
    await term.waitFor("the filter prompt", (s) => s.includes("filter: _"));
    for (const char of "bulk-1") term.keys(char);
    term.keys("Enter");
    const filtered = await term.waitFor("the filtered rows", (s) =>
      s.includes('filter "bulk-1": 2 of 4 rows'),
    );
    expect(filtered).toContain(b1.id);
    expect(filtered).toContain(b10.id);
    expect(filtered).not.toContain(b2.id);
    term.keys("Escape");
    await term.waitFor("the filter cleared", (s) => s.includes(b2.id) && !s.includes('filter "'));

    term.keys("q");
    const deadline = Date.now() + SCREEN_DEADLINE_MS;
    while (Date.now() < deadline && term.tmux(["has-session", "-t", "desk"]).status === 0) {
      await sleep(100);
    }

    // Without NO_COLOR the same desk is colored: the check above could fail.
    const colored = term.tmux([
      "new-session",
      "-d",
      "-s",
      "desk",
      "-x",
      "80",
      "-y",
      "24",
      `sh '${script("colored", "-u NO_COLOR")}'`,
    ]);
    expect(colored.status).toBe(0);
    await term.waitFor("the colored fleet", (s) => s.includes("kept refs (1)"));
    expect(colorCodes(term.tmux(["capture-pane", "-e", "-p", "-t", "desk"]).stdout)).not.toEqual(
      [],
    );
    term.keys("q");
  });
});
