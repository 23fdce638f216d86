import type { TreeChange } from "../../git/diff-tree.js";
import type { ObjectAt } from "../../git/parse.js";

/**
 * The integrated rule's read-only shortcut (fleet/integration.ts, before step
 * 2): a tip holding a change the trunk provably lacks is not integrated, so
 * no `git merge-tree` is run for it (docs/decisions/0057). Against M, the one
 * merge base of the tip and the trunk, such a change is
 *   - a file the tip modified (a blob at the same path in M and the tip, its
 *     contents changed) that the trunk still holds exactly as M does; or
 *   - a file the tip added at a path the trunk has nothing at, in a folder
 *     the trunk has.
 * Merging takes the tip's side of a path only one side changed, so the merge
 * writes that file as the tip's and its tree cannot be the trunk's. Renames
 * cannot move it: a path present on both sides is no rename's source or
 * target, and a folder is taken as renamed only by a side that removed all of
 * it (the trunk has the added file's folder). Everything else — several merge
 * bases, deletions, type changes, submodules, paths holding a newline — is
 * left to the merge. This module only decides; integration.ts reads the
 * changes (one `git diff-tree --stdin`) and the trunk's objects (one `git
 * cat-file --batch-check`) for every tip at once.
 */

/** A tip and what it changed against its one merge base with the trunk. */
export interface TipChanges {
  tip: string;
  changes: readonly TreeChange[];
}

/** The trunk objects to read, and the decision once they are read (in the same order). */
export interface WitnessPlan {
  /** `<trunk>:<path>` names for `git cat-file --batch-check`. */
  names: string[];
  /** The tips holding a change the trunk lacks, given what each name pointed at. */
  decide(objects: readonly (ObjectAt | null)[]): Set<string>;
}

/** Changes looked at per tip, at most: one witness is enough, and a huge change needs no more. */
const WITNESSES_PER_TIP = 32;

const BLOB_MODES = new Set(["100644", "100755", "120000"]);

/** What to read of `trunkTip` to find, for each tip, a change the trunk lacks (module header). */
export function planWitnesses(trunkTip: string, tips: readonly TipChanges[]): WitnessPlan {
  const questions: Question[] = [];
  for (const { tip, changes } of tips) {
    for (const change of changes.filter(mayWitness).slice(0, WITNESSES_PER_TIP)) {
      questions.push(question(tip, trunkTip, change));
    }
  }
  return {
    names: questions.flatMap((q) => q.names),
    decide(objects) {
      const lacking = new Set<string>();
      let at = 0;
      for (const q of questions) {
        const found = objects.slice(at, at + q.names.length);
        at += q.names.length;
        if (q.lacks(found)) lacking.add(q.tip);
      }
      return lacking;
    },
  };
}

interface Question {
  tip: string;
  names: string[];
  lacks(found: readonly (ObjectAt | null)[]): boolean;
}

/** A modified or added blob, at a path one line of cat-file input can name. */
function mayWitness(change: TreeChange): boolean {
  if (change.path.includes("\n")) return false;
  if (change.status === "M") {
    return BLOB_MODES.has(change.oldMode) && change.oldOid !== change.newOid;
  }
  return change.status === "A" && BLOB_MODES.has(change.newMode);
}

/** The trunk objects that decide one change, and how they decide it. */
function question(tip: string, trunkTip: string, change: TreeChange): Question {
  const atPath = `${trunkTip}:${change.path}`;
  if (change.status === "M") {
    return { tip, names: [atPath], lacks: ([held]) => held?.oid === change.oldOid };
  }
  const slash = change.path.lastIndexOf("/");
  if (slash === -1) return { tip, names: [atPath], lacks: ([held]) => held === null };
  const folder = `${trunkTip}:${change.path.slice(0, slash)}`;
  return {
    tip,
    names: [atPath, folder],
    lacks: ([held, dir]) => held === null && dir?.type === "tree",
  };
}
