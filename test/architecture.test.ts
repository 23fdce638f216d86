import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/repo.js";

/**
 * Guard tests: the architecture is a rule too, and these fail when it breaks
 * (docs/architecture.md). They read the sources, not the behaviour.
 */

const SRC = join(PROJECT_ROOT, "src");

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(c?ts|tsx)$/.test(name) ? [path] : [];
  });
}

const FILES = sourceFiles().map((path) => ({
  path,
  name: relative(SRC, path),
  text: readFileSync(path, "utf8"),
}));

/** Every module a file imports, as paths relative to src/ (".ts" even for ".tsx"). */
function importsOf(file: { path: string; text: string }): { module: string; names: string[] }[] {
  const found: { module: string; names: string[] }[] = [];
  const pattern =
    /import\s+(?:type\s+)?(?:\{([^}]*)\}|[\w*\s]+)\s+from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g;
  for (const match of file.text.matchAll(pattern)) {
    const specifier = (match[2] ?? match[3]) as string;
    const module = relative(SRC, resolve(dirname(file.path), specifier)).replace(/\.js$/, ".ts");
    const names = (match[1] ?? "")
      .split(",")
      .map((n) => n.replace(/^\s*type\s+/, "").trim())
      .filter(Boolean);
    found.push({ module, names });
  }
  return found;
}

/**
 * The git operations that create, move or delete a ref (a branch, the trunk,
 * a recovery ref): `update-ref`, a merge commit on the checked-out branch, and
 * `worktree add -b`. Found by reading src/git/, so a new one cannot hide.
 */
function refMutators(): Map<string, string[]> {
  const mutating =
    /"update-ref"|"merge", "--no-edit"|"worktree", "add"|"branch", "-[dDmMf]"|"reset"|"tag"|"notes"|"push"/;
  const byModule = new Map<string, string[]>();
  for (const file of FILES.filter((f) => f.name.startsWith("git/"))) {
    const chunks = file.text.split(/(?=^export (?:async )?function )/m);
    for (const chunk of chunks) {
      const name = /^export (?:async )?function (\w+)/.exec(chunk)?.[1];
      if (name && mutating.test(chunk)) {
        byModule.set(file.name, [...(byModule.get(file.name) ?? []), name]);
      }
    }
  }
  return byModule;
}

/** The only modules allowed to move or delete refs, and what each may call. */
const REF_WRITERS: Record<string, string[]> = {
  // The trunk moves only here: a compare-and-swap to the proved commit, and with a [remote]
  // a push with lease of exactly that commit first (the one trunk move; accept and the queue call it).
  "core/landing/trunk-move.ts": ["moveRef", "pushWithLease"],
  // A landing note on the landed commit (refs/notes/berth-landings): appended, never removed.
  "core/landing/landings.ts": ["appendNote"],
  // Receipt notes (refs/notes/berth): appended, merged with another machine's (cat_sort_uniq),
  // pushed with a lease; readNote only reads (the guard counts every `git notes` call).
  "core/landing/receipt-notes.ts": ["appendNote", "mergeNotes", "pushWithLease", "readNote"],
  // The landing queue merges trunk tip and stacks in its throwaway integration checkout.
  "core/landing/queue-integrate.ts": ["mergeCommit"],
  // update merges into the berth's own branch.
  "core/landing/update.ts": ["mergeCommit"],
  // THE branch delete (accept, drop, prune), by compare-and-swap.
  "core/lifecycle/branch-deletion.ts": ["deleteRef"],
  // Recovery refs: written before unlanded commits lose their branch; the oldest pruned.
  "core/lifecycle/recovery-refs.ts": ["createRef", "deleteRef"],
  // start creates the branch; its undo deletes only the branch it just created.
  "core/lifecycle/start.ts": ["addWorktree", "addWorktreeOnBranch"],
  "core/lifecycle/start-undo.ts": ["deleteRef"],
};

describe("architecture guards", () => {
  it("finds the ref-moving git operations where they live", () => {
    const mutators = refMutators();
    expect(mutators.get("git/refs.ts")).toEqual(
      expect.arrayContaining(["createRef", "moveRef", "deleteRef"]),
    );
    expect(mutators.get("git/merge.ts")).toContain("mergeCommit");
    expect(mutators.get("git/worktrees.ts")).toContain("addWorktree");
  });

  it("only the listed modules move or delete refs", () => {
    const mutators = refMutators();
    const writers: Record<string, string[]> = {};
    for (const file of FILES.filter((f) => !f.name.startsWith("git/"))) {
      for (const { module, names } of importsOf(file)) {
        const used = names.filter((n) => mutators.get(module)?.includes(n));
        if (used.length > 0) writers[file.name] = [...(writers[file.name] ?? []), ...used].sort();
      }
    }
    const expected = Object.fromEntries(
      Object.entries(REF_WRITERS).map(([name, used]) => [name, [...used].sort()]),
    );
    expect(writers).toEqual(expected);
  });

  it("only src/git spawns git, and commands never reach into git/", () => {
    const spawners = FILES.filter((f) => /from "node:child_process"/.test(f.text)).map(
      (f) => f.name,
    );
    // Project commands run through sh (berth/project-command.ts); the desk opens a shell;
    // git/ancestry.ts streams the history walk and stops it once it has read enough.
    // git/run-group.ts forks a few git calls under one sh.
    expect(spawners.sort()).toEqual(
      [
        "commands/desk.ts",
        "core/berth/project-command.ts",
        "git/ancestry.ts",
        "git/run.ts",
        "git/run-group.ts",
        "git/status.ts",
      ].sort(),
    );
    for (const file of FILES.filter((f) => f.name.startsWith("commands/"))) {
      const reached = importsOf(file).filter(({ module }) => module.startsWith("git/"));
      expect(reached, file.name).toEqual([]);
      expect(file.text, file.name).not.toMatch(/["']git["']/);
    }
  });

  it("core and io never import ui; git never imports core", () => {
    for (const file of FILES) {
      const modules = importsOf(file).map((i) => i.module);
      if (/^(core|io|git)\//.test(file.name)) {
        expect(
          modules.filter((m) => m.startsWith("ui/")),
          file.name,
        ).toEqual([]);
      }
      if (/^(git|io)\//.test(file.name)) {
        expect(
          modules.filter((m) => m.startsWith("core/") || m.startsWith("commands/")),
          file.name,
        ).toEqual([]);
      }
    }
  });

  it("the containment predicate and the teardown each have one home", () => {
    const containmentCallers = FILES.filter((f) =>
      /strict ancestor|isStrictAncestor/.test(f.text),
    ).map((f) => f.name);
    expect(containmentCallers.every((n) => n.startsWith("core/fleet/"))).toBe(true);
    // Only the teardown removes a berth's checkout; start undoes the one it just made,
    // and prune removes a stale registration whose folder is already gone.
    const removers = FILES.filter((f) => /\bremoveWorktree\(/.test(f.text)).map((f) => f.name);
    expect(removers.sort()).toEqual([
      "core/lifecycle/prune-apply.ts",
      "core/lifecycle/start-undo.ts",
      "core/lifecycle/teardown.ts",
      "git/worktrees.ts",
    ]);
  });

  it("no module exports a binding that can change: the chunks read the core's once (decision 0060)", () => {
    const mutable = FILES.filter((f) => /^export (let|var) /m.test(f.text)).map((f) => f.name);
    expect(mutable).toEqual([]);
  });

  it("names sort by naturalCompare (text.ts), never by the user's locale", () => {
    // localeCompare orders by the locale Node finds in the environment, and its
    // first call loads ICU's collator: ~18 ms of a 200-berth status (decision 0062).
    const localeSorts = FILES.filter((f) => /\blocaleCompare\(|\bIntl\.Collator\b/.test(f.text));
    expect(localeSorts.map((f) => f.name)).toEqual([]);
  });

  it("no source file grows past ~400 lines", () => {
    const long = FILES.map((f) => ({ name: f.name, lines: f.text.split("\n").length })).filter(
      (f) => f.lines > 420,
    );
    expect(long).toEqual([]);
  });
});
