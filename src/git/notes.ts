import { GitError } from "../errors.js";
import { runGit } from "./run.js";

/**
 * Git notes: text attached to a commit under `refs/notes/<ref>`, which
 * travels with a push of that ref. A note is a commit on the notes ref, so
 * git needs an author and committer identity to write one.
 */

/** What became of an append: written, or why not (outcomes are types, not stderr). */
export type NoteFate =
  | { fate: "written" }
  | { fate: "no_identity"; message: string }
  | { fate: "failed"; message: string };

/** git's own words when it has no usable identity (LC_ALL=C, set by the runner). */
const NO_IDENTITY =
  /Please tell me who you are|unable to auto-detect email address|no email was given|empty ident name/;

/**
 * Appends `text` (a paragraph of its own) to the note on `commit` under
 * `refs/notes/<ref>`, creating the note when there is none. Never throws for
 * git's refusals: the caller decides what a missing note means.
 */
export async function appendNote(
  cwd: string,
  ref: string,
  commit: string,
  text: string,
): Promise<NoteFate> {
  try {
    await runGit(["notes", `--ref=${ref}`, "append", "-F", "-", commit], { cwd, input: text });
    return { fate: "written" };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    const message = error.stderr.trim().split("\n").slice(-1)[0] ?? error.message;
    return NO_IDENTITY.test(error.stderr)
      ? { fate: "no_identity", message }
      : { fate: "failed", message };
  }
}

/** The note on `commit` under `refs/notes/<ref>`, or null when it has none. */
export async function readNote(cwd: string, ref: string, commit: string): Promise<string | null> {
  const result = await runGit(["notes", `--ref=${ref}`, "show", commit], { cwd, okCodes: [1] });
  return result.exitCode === 0 ? result.stdout : null;
}

/**
 * The notes on many commits under one notes ref, in one `git log --no-walk`
 * process: what readNote would answer for each (null: no note). Only `ref`'s
 * notes are shown, whatever notes the user's config displays.
 */
export async function readNotes(
  cwd: string,
  ref: string,
  commits: readonly string[],
): Promise<Map<string, string | null>> {
  const unique = [...new Set(commits)];
  const notes = new Map<string, string | null>(unique.map((commit) => [commit, null]));
  if (unique.length === 0) return notes;
  const format = "--format=%H%x00%N%x01";
  const { stdout } = await runGit(
    // A signature check (log.showSignature) would print its verdict before a record.
    [
      "log",
      "--no-walk=unsorted",
      "--stdin",
      "--no-show-signature",
      "--no-notes",
      `--notes=${ref}`,
      format,
    ],
    { cwd, input: unique.map((commit) => `${commit}\n`).join("") },
  );
  // Each record is "<commit>\0<note>\x01\n"; git never writes an empty note.
  for (const record of stdout.split("\x01\n")) {
    const at = record.indexOf("\0");
    if (at > 0 && at < record.length - 1) notes.set(record.slice(0, at), record.slice(at + 1));
  }
  return notes;
}

/**
 * Merges the notes of `other` (a full notes ref) into `refs/notes/<ref>`,
 * concatenating both notes on a commit that has one on each side, sorted,
 * duplicate lines once (`cat_sort_uniq`): a one-line note per record never
 * loses another writer's line.
 */
export async function mergeNotes(cwd: string, ref: string, other: string): Promise<void> {
  await runGit(["notes", `--ref=${ref}`, "merge", "--quiet", "--strategy=cat_sort_uniq", other], {
    cwd,
  });
}

/** Every line of every note under a notes ref that contains `needle` (one `git grep`). */
export async function grepNotes(cwd: string, ref: string, needle: string): Promise<string[]> {
  // The lines alone, whatever the user's color and grep.lineNumber/grep.column say.
  const plain = ["--no-color", "--no-line-number", "--no-column"];
  const result = await runGit(["grep", "-h", ...plain, "-F", "-e", needle, ref, "--"], {
    cwd,
    okCodes: [1, 128],
  });
  return result.exitCode === 0 ? result.stdout.split("\n").filter((l) => l !== "") : [];
}
