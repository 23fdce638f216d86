import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Context } from "../../context.js";
import { UserError } from "../../errors.js";
import {
  type BriefRecord,
  type ParkedState,
  readBriefRecords,
  removeBriefRecord,
  writeBriefRecord,
} from "../../io/briefs.js";
import { controlCharacters, shellCommand } from "../../text.js";

/**
 * The one place a berth's title and brief are decided (spec section 8,
 * docs/decisions/0026): what a title may be, where a brief is read from, and
 * how a change is merged into the per-branch record (io/briefs.ts). start,
 * describe, park and status all go through here.
 *   1. a title is one line of at most TITLE_MAX characters, with no control
 *      character (a terminal would act on it in every view); blank clears it;
 *   2. a brief comes from a file (relative to where berth runs) or `-` (stdin),
 *      at most BRIEF_MAX bytes; blank clears it;
 *   3. a change keeps what it does not name (a new title keeps the brief);
 *   4. a record lives as long as its branch: readers show it only beside a
 *      branch that exists, and `berth start` forgets the records of deleted
 *      branches (under the fleet lock), so a later branch of the same name
 *      never inherits an old title.
 */

export const TITLE_MAX = 200;
export const BRIEF_MAX = 64 * 1024;

/** What a verb was asked to change: undefined = leave it, null = clear it. */
export interface BriefChange {
  title?: string | null | undefined;
  brief?: string | null | undefined;
}

/** A `--title` argument as the record keeps it, or a usage refusal. */
export function normaliseTitle(
  text: string,
  verb: "start" | "describe" = "describe",
): string | null {
  if (/[\r\n]/.test(text.trim())) {
    throw new UserError("usage", "A title is one line; put the longer story in --brief.", {
      next: shellCommand(["berth", verb, "--help"]),
    });
  }
  const controls = controlCharacters(text.trim());
  if (controls.length > 0) {
    throw new UserError(
      "usage",
      `A title holds no control characters, and this one has ${controls.join(", ")}; nothing changed. Give it as plain text.`,
      { next: shellCommand(["berth", verb, "--help"]) },
    );
  }
  const title = text.trim().replace(/\s+/g, " ");
  if (title.length > TITLE_MAX) {
    throw new UserError(
      "usage",
      `A title is at most ${TITLE_MAX} characters (this one has ${title.length}); put the rest in --brief.`,
    );
  }
  return title === "" ? null : title;
}

/** The text of `--brief <file|->`: the file (relative to `ctx.cwd`) or all of stdin. */
export async function loadBrief(
  ctx: Context,
  source: string,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<string | null> {
  let bytes: Buffer;
  if (source === "-") {
    bytes = await readAll(input);
  } else {
    const path = resolve(ctx.cwd, source);
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new UserError(
        "precondition_failed",
        `Cannot read the brief ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; nothing changed. ` +
          "Give --brief a readable file, or --brief - to read it from stdin.",
        { next: shellCommand(["ls", "-l", path]) },
      );
    }
  }
  if (bytes.length > BRIEF_MAX) {
    throw new UserError(
      "precondition_failed",
      `The brief is larger than ${BRIEF_MAX / 1024} KiB; nothing changed. Keep the brief short and link to the rest.`,
    );
  }
  let text: string;
  try {
    // Fatal: a file that is not UTF-8 text (the wrong file, a binary) is refused, not stored as U+FFFD.
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const what = source === "-" ? "stdin" : resolve(ctx.cwd, source);
    throw new UserError(
      "precondition_failed",
      `The brief (${what}) is not UTF-8 text; nothing changed. Give --brief a text file.`,
    );
  }
  const brief = text.replace(/\s+$/, "");
  return brief === "" ? null : `${brief}\n`;
}

function readAll(input: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    input.on("data", (chunk: Buffer | string) =>
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk),
    );
    input.on("end", () => resolvePromise(Buffer.concat(chunks)));
    input.on("error", reject);
  });
}

/** Whether a change names anything. */
export function changesSomething(change: BriefChange): boolean {
  return change.title !== undefined || change.brief !== undefined;
}

/**
 * The record after a change: what the change names replaces, the rest stays.
 * Returns null when nothing would be left to keep (no title, brief or parking).
 */
export function mergeRecord(
  branch: string,
  previous: BriefRecord | null,
  change: BriefChange & { parked?: ParkedState | null },
  now: Date,
): BriefRecord | null {
  const record: BriefRecord = {
    version: 1,
    branch,
    title: change.title === undefined ? (previous?.title ?? null) : change.title,
    brief: change.brief === undefined ? (previous?.brief ?? null) : change.brief,
    parked: change.parked === undefined ? (previous?.parked ?? null) : change.parked,
    updated_at: now.toISOString(),
  };
  if (record.title === null && record.brief === null && record.parked === null) return null;
  return record;
}

/** Writes the record of `branch`, or removes it when nothing is left to keep (null). */
export async function storeRecord(
  commonDir: string,
  branch: string,
  record: BriefRecord | null,
): Promise<void> {
  if (record === null) await removeBriefRecord(commonDir, branch);
  else await writeBriefRecord(commonDir, record);
}

/** Forgets the records of branches that no longer exist (call holding the fleet lock). */
export async function forgetRecordsWithout(
  commonDir: string,
  branches: ReadonlySet<string>,
): Promise<void> {
  for (const branch of readBriefRecords(commonDir).keys()) {
    if (!branches.has(branch)) await removeBriefRecord(commonDir, branch);
  }
}
