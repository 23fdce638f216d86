import { chmod, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { filterIgnored } from "../../git/ignored.js";
import { writeFileAtomic } from "../../io/atomic.js";
import type { Repository } from "../repo/repository.js";
import { type BerthFacts, berthVariables } from "./env.js";

/**
 * Env-file plumbing at start (spec section 5): the berth's env files get its
 * port and resource handle, plus the `inherit_env` keys copied from the main
 * checkout's env files. berth writes only env files git ignores, so a fresh
 * berth stays clean: an ignored env file present in the berth is updated, and
 * one the main checkout has but the berth lacks (the usual case: `.env` is
 * ignored, so a new checkout has none) is created. Tracked env files are left
 * alone and reported. Values are copied byte for byte, never interpreted:
 * the files are read and written as bytes (latin1 strings, one character per
 * byte), so a value in another encoding than UTF-8 survives unchanged.
 */

export interface EnvFilesOutcome {
  /** Env files written, relative to the checkout. */
  written: string[];
  /** Env files berth left alone, with why. */
  skipped: { file: string; reason: string }[];
  /** `inherit_env` keys no env file of the main checkout defines. */
  missing: string[];
}

/** The variables every written env file gets. */
const MANAGED_KEYS = ["BERTH_ID", "BERTH_PORT", "BERTH_DB"] as const;

export const BLOCK_BEGIN = "# >>> berth: managed by berth start; edits inside are overwritten >>>";
export const BLOCK_END = "# <<< berth <<<";

export async function writeEnvFiles(repo: Repository, facts: BerthFacts): Promise<EnvFilesOutcome> {
  const { env_files: files, inherit_env: inheritKeys } = repo.config.worktree;
  const outcome: EnvFilesOutcome = { written: [], skipped: [], missing: [] };
  if (files.length === 0) return outcome;

  const mainFiles = await readTexts(repo.mainPath, files);
  const berthFiles = await readTexts(facts.path, files);
  const inherited = inheritValues(
    files.flatMap((f) => {
      const text = mainFiles.get(f);
      return text === undefined ? [] : [text];
    }),
    inheritKeys,
  );
  outcome.missing = inheritKeys.filter((key) => !inherited.has(key));

  const candidates = files.filter((f) => berthFiles.has(f) || mainFiles.has(f));
  const ignored = new Set(await filterIgnored(facts.path, candidates));
  const variables = berthVariables(facts);
  const values = new Map<string, string>([
    ...MANAGED_KEYS.map((key): [string, string] => [key, asBytes(variables[key] ?? "")]),
    ...inherited,
  ]);
  for (const file of candidates) {
    if (!ignored.has(file)) {
      outcome.skipped.push({
        file,
        reason: "git does not ignore it; writing it would leave the berth with changes",
      });
      continue;
    }
    const existing = berthFiles.get(file);
    const path = join(facts.path, file);
    await writeFileAtomic(path, Buffer.from(applyManagedValues(existing ?? "", values), "latin1"));
    // Env files often hold secrets: keep the berth's mode, or copy the main checkout's.
    const modeFrom = existing === undefined ? join(repo.mainPath, file) : null;
    const mode = modeFrom ? await modeOf(modeFrom) : await modeOf(path);
    if (mode !== null) await chmod(path, mode);
    outcome.written.push(file);
  }
  return outcome;
}

async function readTexts(root: string, files: readonly string[]): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const file of files) {
    try {
      texts.set(file, await readFile(join(root, file), "latin1"));
    } catch {
      // Absent (or not a file): nothing to read.
    }
  }
  return texts;
}

/** A value berth made (a path, an id) as the bytes of its UTF-8, one character per byte. */
function asBytes(text: string): string {
  return Buffer.from(text, "utf8").toString("latin1");
}

async function modeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).mode & 0o777;
  } catch {
    return null;
  }
}

interface Assignment {
  key: string;
  /** The value exactly as written after `=`, quotes included (may span lines). */
  raw: string;
  /** Line indices this assignment occupies. */
  first: number;
  last: number;
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;
const ASSIGNMENT_PREFIX = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=\s*/;

/** Assignments in dotenv text, quoted values spanning several lines included. */
export function parseAssignments(lines: readonly string[]): Assignment[] {
  const found: Assignment[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = ASSIGNMENT.exec(lines[i] ?? "");
    if (!match) continue;
    const key = match[1] as string;
    let raw = match[2] as string;
    const first = i;
    const quote = raw[0];
    if ((quote === '"' || quote === "'") && !closesQuote(raw.slice(1), quote)) {
      while (i + 1 < lines.length) {
        i++;
        raw += `\n${lines[i]}`;
        if (closesQuote(lines[i] ?? "", quote)) break;
      }
    }
    found.push({ key, raw, first, last: i });
  }
  return found;
}

function closesQuote(text: string, quote: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && quote === '"') i++;
    else if (text[i] === quote) return true;
  }
  return false;
}

/** The value of each wanted key; a later file (e.g. `.env.local`) overrides an earlier one. */
export function inheritValues(
  texts: readonly string[],
  keys: readonly string[],
): Map<string, string> {
  const values = new Map<string, string>();
  if (keys.length === 0) return values;
  const wanted = new Set(keys);
  for (const text of texts) {
    for (const assignment of parseAssignments(text.split("\n"))) {
      if (wanted.has(assignment.key)) values.set(assignment.key, assignment.raw);
    }
  }
  return values;
}

/**
 * Sets each key in dotenv text: an assignment the file already has outside
 * berth's block is rewritten in place (so whichever definition a loader
 * honours carries the berth's value); the rest go into berth's block at the
 * end, which is replaced on every write.
 */
export function applyManagedValues(text: string, values: ReadonlyMap<string, string>): string {
  const lines = withoutBlock(text === "" ? [] : text.replace(/\n$/, "").split("\n"));
  const inBlock = new Map(values);
  const assignments = parseAssignments(lines);
  // Replace from the bottom so earlier line indices stay valid.
  for (const assignment of [...assignments].reverse()) {
    const value = values.get(assignment.key);
    if (value === undefined) continue;
    const prefix =
      ASSIGNMENT_PREFIX.exec(lines[assignment.first] ?? "")?.[0] ?? `${assignment.key}=`;
    lines.splice(
      assignment.first,
      assignment.last - assignment.first + 1,
      ...`${prefix}${value}`.split("\n"),
    );
    inBlock.delete(assignment.key);
  }
  if (inBlock.size > 0) {
    if (lines.length > 0 && lines[lines.length - 1] !== "") lines.push("");
    lines.push(BLOCK_BEGIN);
    for (const [key, value] of inBlock) lines.push(`${key}=${value}`);
    lines.push(BLOCK_END);
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** The lines without berth's block (and the blank line berth put before it). */
function withoutBlock(lines: string[]): string[] {
  const begin = lines.indexOf(BLOCK_BEGIN);
  if (begin === -1) return lines;
  const endAt = lines.indexOf(BLOCK_END, begin);
  const end = endAt === -1 ? lines.length - 1 : endAt;
  const kept = [...lines.slice(0, begin), ...lines.slice(end + 1)];
  if (begin > 0 && kept[begin - 1] === "" && begin === kept.length) kept.splice(begin - 1, 1);
  return kept;
}
