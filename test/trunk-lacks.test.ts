import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAncestry } from "../src/core/fleet/commit-graph.js";
import { judgeIntegration } from "../src/core/fleet/integration.js";
import { mergedTree } from "../src/git/merge.js";
import { makeRepo, type TestRepo } from "./helpers/repo.js";

/**
 * The integrated rule's shortcut (fleet/trunk-lacks.ts) must never call a tip
 * "not integrated" that `git merge-tree` would call integrated: integrated
 * berths are pruned. Random histories with squash merges, partial squashes,
 * cherry-picks, renames of files and folders, and the trunk merged into
 * branches are judged both ways, and the whole rule is compared with the rule
 * run without the shortcut.
 */

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

let repo: TestRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

const BRANCHES = ["b0", "b1", "b2", "b3", "b4", "b5"];

function filesOf(root: string, under = ""): string[] {
  return readdirSync(join(root, under)).flatMap((name) => {
    if (name === ".git") return [];
    const rel = under === "" ? name : `${under}/${name}`;
    return statSync(join(root, rel)).isDirectory() ? filesOf(root, rel) : [rel];
  });
}

/** One random history in `r`; returns the branches made. */
function randomHistory(r: TestRepo, random: () => number, steps: number): string[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const made = new Set<string>();
  const tryGit = (args: string[]) => {
    try {
      r.git(args);
      return true;
    } catch {
      return false;
    }
  };
  const edit = () => {
    const files = filesOf(r.path);
    const roll = random();
    if (roll < 0.4 && files.length > 0) {
      r.write(pick(files), `${pick(["v1", "v2", "v3"])}\n`);
    } else if (roll < 0.65) {
      const folder = pick(["", "d", "d/e", "f", "g"]);
      const file =
        folder === "" ? `n${Math.floor(random() * 6)}` : `${folder}/n${Math.floor(random() * 6)}`;
      if (!existsSync(join(r.path, dirname(file))))
        mkdirSync(join(r.path, dirname(file)), { recursive: true });
      if (existsSync(join(r.path, file)) && statSync(join(r.path, file)).isDirectory()) return;
      r.write(file, `${pick(["v1", "v2", "new"])}\n`);
    } else if (roll < 0.75 && files.length > 1) {
      tryGit(["rm", "-q", "--", pick(files)]);
    } else if (roll < 0.9 && files.length > 0) {
      const from = pick(files);
      const to = `${pick(["d", "f", "g", "h"])}/m${Math.floor(random() * 4)}`;
      if (!existsSync(join(r.path, dirname(to))))
        mkdirSync(join(r.path, dirname(to)), { recursive: true });
      if (!existsSync(join(r.path, to))) tryGit(["mv", "--", from, to]);
    } else {
      // A whole folder renamed (merge-ort's directory rename detection).
      const from = pick(["d", "f", "g"]);
      const to = pick(["h", "k"]);
      if (existsSync(join(r.path, from)) && !existsSync(join(r.path, to)))
        tryGit(["mv", "--", from, to]);
    }
  };
  const commitEdits = (message: string) => {
    const count = 1 + Math.floor(random() * 3);
    for (let i = 0; i < count; i++) edit();
    r.commit(message);
  };
  for (let step = 0; step < steps; step++) {
    const roll = random();
    if (roll < 0.25) {
      r.git(["checkout", "-q", "main"]);
      commitEdits(`trunk ${step}`);
    } else if (roll < 0.55) {
      const branch = pick(BRANCHES);
      if (made.has(branch)) r.git(["checkout", "-q", branch]);
      else {
        const from =
          made.size > 0 && random() < 0.3 ? pick([...made]) : random() < 0.3 ? "main~1" : "main";
        if (!tryGit(["checkout", "-q", "-b", branch, from]))
          r.git(["checkout", "-q", "-b", branch, "main"]);
        made.add(branch);
      }
      commitEdits(`${branch} ${step}`);
    } else if (made.size > 0) {
      const branch = pick([...made]);
      r.git(["checkout", "-q", "main"]);
      if (roll < 0.72) {
        // A forge's squash merge.
        if (tryGit(["merge", "-q", "--squash", branch])) r.commit(`squash ${branch}`);
        else r.git(["reset", "-q", "--hard"]);
      } else if (roll < 0.8) {
        // Part of the branch's work taken by hand.
        const files = r
          .git(["diff", "--name-only", "--no-renames", `main...${branch}`])
          .split("\n")
          .filter(Boolean);
        const some = files.filter((f) => r.git(["ls-tree", "--name-only", branch, "--", f]) !== "");
        if (some.length > 0 && tryGit(["checkout", branch, "--", pick(some)]))
          r.commit(`partial ${branch}`);
      } else if (roll < 0.88) {
        if (!tryGit(["cherry-pick", branch])) tryGit(["cherry-pick", "--abort"]);
      } else {
        // The trunk merged into the branch (several merge bases may follow).
        r.git(["checkout", "-q", branch]);
        if (!tryGit(["merge", "-q", "--no-edit", "main"])) tryGit(["merge", "--abort"]);
      }
    }
  }
  r.git(["checkout", "-q", "main"]);
  return [...made];
}

/** The whole rule run on `tips` against main as it is now, with the graph it read. */
async function judgeAgainstMain(r: TestRepo, tips: readonly string[]) {
  const trunkTip = r.git(["rev-parse", "main"]);
  const ancestry = await readAncestry(r.path, [trunkTip, ...tips], { primary: trunkTip });
  const trunk = {
    tip: trunkTip,
    tree: r.git(["rev-parse", "main^{tree}"]),
    ref: "refs/heads/main",
  };
  const candidates = tips.map((tip) => ({
    tip,
    tree: null,
    fork: ancestry.forkPoint(tip, trunkTip),
  }));
  return {
    trunkTip,
    ancestry,
    ...(await judgeIntegration(r.path, trunk, candidates, ancestry, 1)),
  };
}

/** The whole rule's answer for one branch of `r`, judged against main. */
async function integratedByRule(r: TestRepo, branch: string): Promise<boolean> {
  const tip = r.git(["rev-parse", branch]);
  return (await judgeAgainstMain(r, [tip])).integrated.has(tip);
}

describe("the integrated rule's shortcut", () => {
  it("judges a berth that merged the trunk in against its true merge base, not where it forked", async () => {
    repo = makeRepo();
    const r = repo;
    r.write("p", "v1\n");
    r.commit("p");
    r.git(["checkout", "-q", "-b", "berth/x"]);
    r.write("q", "work\n");
    r.commit("the berth's work");
    r.git(["checkout", "-q", "main"]);
    r.write("p", "v2\n");
    r.commit("the trunk changes p");
    r.git(["checkout", "-q", "berth/x"]);
    r.git(["merge", "-q", "--no-edit", "main"]);
    r.git(["checkout", "-q", "main"]);
    // The trunk changes p back, then squash-merges the berth: all its work is in.
    r.write("p", "v1\n");
    r.commit("the trunk changes p back");
    r.git(["merge", "-q", "--squash", "berth/x"]);
    r.commit("squash berth/x");
    // Against where it forked, p (v1 -> v2) would look like a change the trunk lacks.
    expect(r.git(["merge-tree", "--write-tree", "main", "berth/x"])).toBe(
      r.git(["rev-parse", "main^{tree}"]),
    );
    expect(await integratedByRule(r, "berth/x")).toBe(true);
  });

  it("leaves an added file to the merge when the trunk renamed its folder", async () => {
    repo = makeRepo();
    const r = repo;
    mkdirSync(join(r.path, "d"));
    r.write("d/f", "f\n");
    r.commit("d");
    r.git(["checkout", "-q", "-b", "berth/x"]);
    r.write("d/new", "new\n");
    r.commit("the berth adds d/new");
    r.git(["checkout", "-q", "main"]);
    // The trunk renames d/ to e/ and takes the berth's file there by hand.
    r.git(["mv", "d", "e"]);
    r.write("e/new", "new\n");
    r.commit("d/ becomes e/, with the berth's file");
    // merge-ort follows the folder's rename (told to, not a "file location" conflict): merging changes nothing.
    expect(await mergedTree(r.path, "main", "berth/x")).toEqual({
      tree: r.git(["rev-parse", "main^{tree}"]),
      conflicted: false,
    });
    expect(await integratedByRule(r, "berth/x")).toBe(true);
  });

  it("sets aside, without a merge, a berth whose change the trunk lacks", async () => {
    repo = makeRepo();
    const r = repo;
    mkdirSync(join(r.path, "d"));
    r.write("d/f", "f\n");
    r.write("g", "g\n");
    r.commit("files");
    r.git(["checkout", "-q", "-b", "berth/modifies"]);
    r.write("d/f", "changed\n");
    r.commit("modify d/f");
    r.git(["checkout", "-q", "-b", "berth/adds", "main"]);
    r.write("d/added", "added\n");
    r.commit("add d/added");
    r.git(["checkout", "-q", "main"]);
    r.write("g", "trunk\n");
    r.commit("the trunk moves on elsewhere");
    const tips = ["berth/modifies", "berth/adds"].map((b) => r.git(["rev-parse", b]));
    const first = await judgeAgainstMain(r, tips);
    for (const tip of tips) {
      expect(first.ancestry.mergeBase(tip, first.trunkTip)).toBe(r.git(["rev-parse", "main~1"]));
    }
    expect({ integrated: first.integrated, setAside: first.setAside }).toEqual({
      integrated: new Set(),
      setAside: new Set(tips),
    });
    // Once the trunk holds the same change, it is the merge's to judge.
    r.write("d/f", "changed\n");
    r.commit("the trunk makes the same change");
    const second = await judgeAgainstMain(r, tips);
    expect(second.setAside).toEqual(new Set([tips[1]]));
    // Merged into the trunk's later tree, berth/modifies changes nothing: it is integrated.
    expect(second.integrated).toEqual(new Set([tips[0]]));
  });

  it("never sets aside a tip that merging would leave integrated, on random histories", async () => {
    const tally = { setAside: 0, integrated: 0, mergeBases: 0 };
    for (let seed = 1; seed <= 14; seed++) {
      repo = makeRepo();
      const r = repo;
      mkdirSync(join(r.path, "d/e"), { recursive: true });
      for (const file of ["a", "b", "d/x", "d/y", "d/e/z", "c"]) r.write(file, `${file}\n`);
      r.commit("files");
      const branches = randomHistory(r, rng(seed), 40);
      const cwd = r.path;
      const trunkTip = r.git(["rev-parse", "main"]);
      const trunkTree = r.git(["rev-parse", "main^{tree}"]);
      const tips = [...new Set(branches.map((b) => r.git(["rev-parse", b])))];
      const ancestry = await readAncestry(cwd, [trunkTip, ...tips], { primary: trunkTip });
      const asked = tips.filter((tip) => !ancestry.isAncestor(tip, trunkTip));
      for (const tip of asked) {
        const base = ancestry.mergeBase(tip, trunkTip);
        if (base === null) continue;
        tally.mergeBases++;
        expect(r.git(["merge-base", "--all", trunkTip, tip]).split("\n"), `seed ${seed}`).toEqual([
          base,
        ]);
      }
      const candidates = asked.map((tip) => ({
        tip,
        tree: null,
        fork: ancestry.forkPoint(tip, trunkTip),
      }));
      const trunk = { tip: trunkTip, tree: trunkTree, ref: "refs/heads/main" };
      const { integrated, setAside } = await judgeIntegration(cwd, trunk, candidates, ancestry, 2);
      // The same rule with a merge for every tip.
      const expected = new Set<string>();
      for (const { tip, fork } of candidates) {
        if (fork === null) continue;
        const tree = r.git(["rev-parse", `${tip}^{tree}`]);
        if (tree === r.git(["rev-parse", `${fork}^{tree}`])) continue;
        const result = await mergedTree(cwd, trunkTip, tip);
        const merged = !result.conflicted && result.tree === trunkTree;
        if (setAside.has(tip))
          expect(merged, `seed ${seed}: ${tip} set aside but integrated`).toBe(false);
        if (tree === trunkTree || merged) expected.add(tip);
      }
      expect([...integrated].sort(), `seed ${seed}`).toEqual([...expected].sort());
      tally.setAside += setAside.size;
      tally.integrated += integrated.size;
      r.cleanup();
      repo = null;
    }
    // The histories made every case happen: tips set aside, tips integrated, merge bases known.
    expect(tally.setAside).toBeGreaterThan(10);
    expect(tally.integrated).toBeGreaterThan(3);
    expect(tally.mergeBases).toBeGreaterThan(20);
    // Fourteen real repositories: about a minute on a 2-core machine, twice that when it is busy.
  }, 300_000);
});
