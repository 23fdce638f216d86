// Builds a realistic fleet for benchmarks: a trunk with a few thousand commits,
// trains of 3-5 stages, landed berths, dirty berths, kept refs (branches whose
// checkout was reclaimed), a few gate receipts and a logbook. All history is
// written by one `git fast-import`; checkouts by `git worktree add` from two
// small `sh` lanes; berth's own files (ready markers, receipts, logbook) are
// written as `berth start` / `berth gate` would. The same seed builds the same fleet.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Settings of Node's own start-up, which every Node program pays before its
 * first line and which have nothing to do with berth: NODE_EXTRA_CA_CERTS
 * makes Node read and parse a certificate bundle at start-up (~100 ms on a
 * host that sets it; berth opens no TLS connection), NODE_OPTIONS adds flags.
 * The benchmark runs without them, as it runs without the user's git config;
 * the machine section measures `node -e 0` both ways (docs/performance.md).
 */
export const NODE_START_SETTINGS = ["NODE_OPTIONS", "NODE_EXTRA_CA_CERTS"];

export function benchEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("GIT_") || k.startsWith("BERTH_") || NODE_START_SETTINGS.includes(k)) continue;
    env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    NO_COLOR: "1",
  };
}

/** A seeded generator, so every run builds the same fleet. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Runs `sh -c script` with arguments; resolves when it exits 0. */
function sh(script, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script, "sh", ...args], {
      ...options,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`sh exited ${code}: ${stderr.slice(0, 500)}`)),
    );
  });
}

/** Runs one fixed script over `items` in `lanes` parallel `sh` processes. */
async function shLanes(script, items, lanes, options) {
  const byLane = Array.from({ length: lanes }, () => []);
  items.forEach((item, i) => {
    byLane[i % lanes].push(...item);
  });
  await Promise.all(byLane.filter((a) => a.length > 0).map((args) => sh(script, args, options)));
}

/**
 * @param {{worktrees: number, trunkCommits?: number, files?: number, seed?: number, farBehind?: number}} options
 *   `worktrees` linked worktrees are made (the main checkout comes on top).
 *   `files` are spread over folders of about 50 (at least 20 folders).
 *   `farBehind`: one more berth, a stale one: forked that many trunk commits
 *   below the trunk's tip, with one commit of its own made just after.
 */
export async function buildFleet({
  worktrees,
  trunkCommits = 3000,
  files = 300,
  seed = 42,
  farBehind = 0,
}) {
  const root = mkdtempSync(join(tmpdir(), `berth-bench-${worktrees}-`));
  const home = join(root, "home");
  mkdirSync(home);
  const env = benchEnv(home);
  const repo = join(root, "repo");
  const wtRoot = join(root, "repo.worktrees");
  const common = join(repo, ".git");
  const git = (args, cwd = repo, input) =>
    execFileSync("git", args, { cwd, env, input, encoding: "utf8", maxBuffer: 1 << 28 }).trim();
  execFileSync("git", ["init", "-q", "-b", "main", repo], { env });
  git(["config", "gc.auto", "0"]);

  // One fast-import stream: the trunk, then every berth's commits.
  const now = Math.floor(Date.now() / 1000);
  let when = now - 400 * 24 * 3600;
  let mark = 0;
  const out = [];
  const blob = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const commitTime = [];
  const commit = (ref, parent, path, content, message, at = null) => {
    mark++;
    when += 60;
    commitTime[mark] = at ?? when;
    out.push(
      `commit ${ref}\nmark :${mark}\ncommitter Bench <bench@example.com> ${at ?? when} +0000\n`,
      blob(message),
      parent ? `from :${parent}\n` : "",
      ...(Array.isArray(path) ? path : [`M 100644 inline ${path}\n${blob(content)}`]),
    );
    return mark;
  };
  const dirs = Math.max(20, Math.round(files / 50));
  const fileAt = (f) => `src/dir${f % dirs}/file${f}.txt`;
  const firstFiles = [];
  for (let f = 0; f < files; f++) {
    firstFiles.push(`M 100644 inline ${fileAt(f)}\n${blob(`file ${f}\n`.repeat(20))}`);
  }
  let trunk = commit("refs/heads/main", null, firstFiles, "", "commit 1");
  const trunkMarks = [trunk];
  for (let c = 2; c <= trunkCommits; c++) {
    const f = c % files;
    // Contents repeat (fast-import stores each once): a long history stays quick to build.
    const version = trunkCommits > 10_000 ? c % 97 : c;
    trunk = commit(
      "refs/heads/main",
      trunk,
      fileAt(f),
      `file ${f} v${version}\n`.repeat(20),
      `commit ${c}`,
    );
    trunkMarks.push(trunk);
  }

  const random = rng(seed);
  let n = 0;
  /** Every berth branch: { id, branch, from, forkMark, tipMark, checkout, dirty, receipt }. */
  const berths = [];
  const newBerth = (from, forkMark) => {
    const id = `b${String(n++).padStart(4, "0")}-${((n * 2654435761) >>> 0).toString(16).slice(0, 6)}`;
    const berth = {
      id,
      branch: `berth/${id}`,
      from,
      forkMark,
      tipMark: forkMark,
      checkout: true,
      dirty: false,
      receipt: false,
    };
    berths.push(berth);
    return berth;
  };
  const work = (berth) => {
    berth.tipMark = commit(
      `refs/heads/${berth.branch}`,
      berth.tipMark,
      `work/${berth.id}.txt`,
      `${berth.id}\n`,
      `work ${berth.id}`,
    );
  };
  const kinds = { train_stages: 0, kept_refs: 0, landed: 0, dirty: 0, active: 0, receipts: 0 };
  let made = 0;
  while (made < worktrees) {
    // The trunk moves on now and then, so older berths fall behind.
    if (random() < 0.15) {
      const f = Math.floor(random() * files);
      trunk = commit(
        "refs/heads/main",
        trunk,
        fileAt(f),
        `file ${f} moved on at ${mark}\n`,
        `trunk moves ${mark}`,
      );
    }
    const kind = random();
    if (kind < 0.5) {
      // A train of 3-5 stages, each forked from the previous stage's branch.
      // Sometimes its first stage was reclaimed: the branch stays as a kept ref.
      const depth = 3 + Math.floor(random() * 3);
      const reclaimFirst = random() < 0.3;
      let from = "main";
      let tip = trunk;
      for (let s = 0; s < depth; s++) {
        const berth = newBerth(from === "main" ? null : from, tip);
        work(berth);
        if (s === 0 && reclaimFirst) {
          berth.checkout = false;
          kinds.kept_refs++;
        } else {
          if (made >= worktrees) berth.checkout = false;
          else {
            made++;
            kinds.train_stages++;
          }
        }
        from = berth.branch;
        tip = berth.tipMark;
      }
    } else if (kind < 0.65) {
      // A landed berth: its commit was fast-forwarded onto the trunk.
      const berth = newBerth(null, trunk);
      work(berth);
      out.push(`reset refs/heads/main\nfrom :${berth.tipMark}\n\n`);
      trunk = berth.tipMark;
      made++;
      kinds.landed++;
    } else if (kind < 0.8) {
      // A dirty berth: one modified tracked file and one untracked file.
      const berth = newBerth(null, trunk);
      if (random() < 0.5) work(berth);
      berth.dirty = true;
      made++;
      kinds.dirty++;
    } else {
      const berth = newBerth(null, trunk);
      work(berth);
      berth.receipt = random() < 0.3;
      made++;
      kinds.active++;
    }
  }
  let farBranch = null;
  if (farBehind > 0) {
    // The stale berth: forked long ago, one commit made right after, never updated.
    const forkMark = trunkMarks[Math.max(0, trunkMarks.length - 1 - farBehind)];
    const berth = newBerth(null, forkMark);
    berth.id = `far-${berth.id}`;
    berth.branch = `berth/${berth.id}`;
    berth.tipMark = commit(
      `refs/heads/${berth.branch}`,
      forkMark,
      `work/${berth.id}.txt`,
      `${berth.id}\n`,
      `work ${berth.id}`,
      commitTime[forkMark] + 30,
    );
    kinds.far_behind = farBehind;
    farBranch = berth.branch;
  }
  // A berth that never gained a commit still has its branch, at its fork point.
  for (const berth of berths) {
    if (berth.tipMark === berth.forkMark)
      out.push(`reset refs/heads/${berth.branch}\nfrom :${berth.forkMark}\n\n`);
  }
  const marksFile = join(root, "marks");
  git(["fast-import", "--quiet", `--export-marks=${marksFile}`], repo, out.join(""));
  const sha = new Map(
    readFileSync(marksFile, "utf8")
      .trim()
      .split("\n")
      .map((line) => {
        const [m, oid] = line.split(" ");
        return [Number(m.slice(1)), oid];
      }),
  );
  git(["checkout", "-q", "-f", "main"]);

  // Checkouts, one lane: a `git worktree add` reads every other registration,
  // and one half-written by a concurrent add makes it fail.
  const withCheckout = berths.filter((b) => b.checkout);
  await shLanes(
    'while [ $# -gt 0 ]; do git worktree add -q "$1" "$2" || exit 1; shift 2; done',
    withCheckout.map((b) => [join(wtRoot, b.id), b.branch]),
    1,
    { cwd: repo, env },
  );

  // berth's own files: ready markers, a few receipts, dirty edits, a logbook.
  const trees = new Map();
  const receiptTips = withCheckout.filter((b) => b.receipt).map((b) => sha.get(b.tipMark));
  if (receiptTips.length > 0) {
    const answer = git(
      ["cat-file", "--batch-check=%(objectname)"],
      repo,
      receiptTips.map((t) => `${t}^{tree}\n`).join(""),
    ).split("\n");
    receiptTips.forEach((tip, i) => {
      trees.set(tip, answer[i]);
    });
  }
  const logLines = [];
  const createdAt = new Date((now - 3 * 3600) * 1000).toISOString();
  for (const berth of withCheckout) {
    const path = join(wtRoot, berth.id);
    const gitFile = readFileSync(join(path, ".git"), "utf8");
    const adminDir = gitFile.replace(/^gitdir: /, "").trim();
    mkdirSync(join(adminDir, "berth"), { recursive: true });
    writeFileSync(
      join(adminDir, "berth", "ready"),
      JSON.stringify({
        id: berth.id,
        branch: berth.branch,
        created_at: createdAt,
        berth_version: "bench",
        from: berth.from,
        from_tip: sha.get(berth.forkMark),
      }),
    );
    if (berth.receipt) {
      const tip = sha.get(berth.tipMark);
      writeFileSync(
        join(adminDir, "berth", "receipt.json"),
        `${JSON.stringify({
          version: 1,
          commit: tip,
          tree: trees.get(tip),
          branch: berth.branch,
          trunk: "main",
          trunk_tip: sha.get(berth.forkMark),
          checks: [{ name: "test", command: "npm test", ok: true, duration_ms: 1200 }],
          created_at: createdAt,
        })}\n`,
      );
      kinds.receipts++;
    }
    if (berth.dirty) {
      writeFileSync(join(path, "src/dir0/file0.txt"), "edited\n");
      writeFileSync(join(path, "scratch.txt"), "scratch\n");
    }
    for (const [verb, offset] of [
      ["start", 3 * 3600],
      ["gate", 2 * 3600],
    ]) {
      const base = {
        schema: 1,
        invocation: `${berth.id}-${verb}`,
        verb,
        branch: berth.branch,
        path,
        pid: 1,
        host: "bench-host",
      };
      const at = new Date((now - offset) * 1000).toISOString();
      logLines.push(JSON.stringify({ ...base, at, event: "begin" }));
      logLines.push(
        JSON.stringify({
          ...base,
          at,
          event: "finish",
          outcome: "ok",
          error_code: null,
          duration_ms: 1500,
        }),
      );
    }
  }
  const logbookDir = join(common, "berth", "logbook");
  mkdirSync(logbookDir, { recursive: true });
  writeFileSync(
    join(logbookDir, `${new Date().toISOString().slice(0, 7)}.jsonl`),
    `${logLines.join("\n")}\n`,
  );

  // Settle every index once, a second after the last checkout wrote it, as a
  // user's own git commands would have: otherwise its entries stay "racily
  // clean" and every read-only `git status` (GIT_OPTIONAL_LOCKS=0, which
  // cannot write the refreshed index back) re-hashes every file.
  await new Promise((r) => setTimeout(r, 1100));
  const worktreePaths = [repo, ...withCheckout.map((b) => join(wtRoot, b.id))];
  await shLanes(
    'for wt do git -C "$wt" update-index -q --refresh >/dev/null || true; done',
    worktreePaths.map((p) => [p]),
    2,
    { cwd: repo, env },
  );

  return {
    root,
    repo,
    env,
    worktreePaths,
    farBranch,
    summary: {
      worktrees: worktreePaths.length,
      branches: berths.length + 1,
      trunk_commits: Number(git(["rev-list", "--count", "main"])),
      ...kinds,
    },
  };
}
