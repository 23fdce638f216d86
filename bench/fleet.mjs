// Builds a realistic fleet for benchmarks: a trunk with a few thousand commits,
// trains of 3-5 stages, landed berths, dirty berths and kept refs (branches whose
// checkout was reclaimed). Uses git directly (fast-import for history, worktree add
// for checkouts) and writes berth's ready markers as `berth start` would.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function benchEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
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

export function buildFleet({ worktrees, trunkCommits = 3000, files = 300, seed = 42 }) {
  const root = mkdtempSync(join(tmpdir(), `berth-bench-${worktrees}-`));
  const home = join(root, "home");
  mkdirSync(home);
  const env = benchEnv(home);
  const repo = join(root, "repo");
  const git = (args, cwd = repo, input) =>
    execFileSync("git", args, { cwd, env, input, encoding: "utf8", maxBuffer: 1 << 28 }).trim();
  execFileSync("git", ["init", "-q", "-b", "main", repo], { env });
  git(["config", "gc.auto", "0"]);

  // History: `files` files, then trunkCommits commits each touching one file.
  let stream = "";
  const blob = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  for (let c = 1; c <= trunkCommits; c++) {
    const when = 1_700_000_000 + c * 60;
    stream += `commit refs/heads/main\nmark :${c}\ncommitter Bench <bench@example.com> ${when} +0000\n`;
    stream += blob(`commit ${c}`);
    if (c > 1) stream += `from :${c - 1}\n`;
    if (c === 1) {
      for (let f = 0; f < files; f++) {
        stream += `M 100644 inline src/dir${f % 20}/file${f}.txt\n${blob(`file ${f}\n`.repeat(20))}`;
      }
    } else {
      const f = c % files;
      stream += `M 100644 inline src/dir${f % 20}/file${f}.txt\n${blob(`file ${f} v${c}\n`.repeat(20))}`;
    }
  }
  git(["fast-import", "--quiet"], repo, stream);
  git(["checkout", "-q", "-f", "main"]);

  const random = rng(seed);
  const wtRoot = join(root, "repo.worktrees");
  const common = join(repo, ".git");
  let made = 0;
  let n = 0;
  const commitIn = (path, label) => {
    writeFileSync(join(path, `work-${label}.txt`), `${label}\n`);
    git(["add", "-A"], path);
    git(["commit", "-q", "-m", `work ${label}`], path);
    return git(["rev-parse", "HEAD"], path);
  };
  const addBerth = (from, fromTip) => {
    const id = `b${String(n++).padStart(4, "0")}-${((n * 2654435761) >>> 0).toString(16).slice(0, 6)}`;
    const path = join(wtRoot, id);
    const branch = `berth/${id}`;
    git(["worktree", "add", "-q", "--no-track", "-b", branch, path, fromTip]);
    const key = git(["rev-parse", "--git-dir"], path).split("/").pop();
    mkdirSync(join(common, "worktrees", key, "berth"), { recursive: true });
    writeFileSync(
      join(common, "worktrees", key, "berth", "ready"),
      JSON.stringify({
        id,
        branch,
        created_at: new Date().toISOString(),
        berth_version: "bench",
        from,
        from_tip: fromTip,
      }),
    );
    made++;
    return { id, path, branch };
  };

  const landed = [];
  while (made < worktrees) {
    const kind = random();
    const trunkTip = git(["rev-parse", "main"]);
    if (kind < 0.5) {
      // A train of 3-5 stages; sometimes the first stages are reclaimed (kept refs).
      const depth = Math.min(3 + Math.floor(random() * 3), worktrees - made);
      let from = "main";
      let tip = trunkTip;
      const stages = [];
      for (let s = 0; s < depth; s++) {
        const berth = addBerth(from, tip);
        tip = commitIn(berth.path, `${berth.id}`);
        from = berth.branch;
        stages.push(berth);
      }
      if (random() < 0.3 && stages.length > 1) {
        const first = stages[0];
        git(["worktree", "remove", first.path]); // kept ref: branch stays, checkout goes
        made--;
      }
    } else if (kind < 0.65) {
      // A landed berth: its commit is fast-forwarded onto the trunk.
      const berth = addBerth("main", trunkTip);
      const tip = commitIn(berth.path, berth.id);
      git(["update-ref", "refs/heads/main", tip, trunkTip]);
      landed.push(berth);
    } else if (kind < 0.8) {
      // A dirty berth: one modified tracked file and one untracked file.
      const berth = addBerth("main", trunkTip);
      writeFileSync(join(berth.path, "src/dir0/file0.txt"), "edited\n");
      writeFileSync(join(berth.path, "scratch.txt"), "scratch\n");
    } else {
      const berth = addBerth("main", trunkTip);
      commitIn(berth.path, berth.id);
    }
  }
  // The main checkout follows the trunk it has checked out.
  git(["reset", "-q", "--hard", "main"]);
  const worktreePaths = git(["worktree", "list", "--porcelain"])
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice(9));
  return { root, repo, env, worktreePaths };
}
