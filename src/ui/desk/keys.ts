import type { Key } from "ink";
import { OVERLAP_MARK } from "./lines.js";

/**
 * The desk's keys: the legend under the list, the help pane (`?`) and the
 * splitting of a chunk of typed input into one key each.
 */

/** One key of the legend: what to press and what it does, in a word. */
export interface LegendKey {
  key: string;
  label: string;
  /** The sentence the help pane (`?`) shows. */
  help: string;
}

export const LEGEND_KEYS: readonly LegendKey[] = [
  { key: "j/k", label: "move", help: "move the selection (also ↑/↓)" },
  { key: "enter", label: "detail", help: "show or hide the selected row's detail (also d)" },
  {
    key: "/",
    label: "filter",
    help: "filter rows by id, branch or title; Enter keeps it, Esc clears it",
  },
  { key: "g", label: "gate", help: "gate: run the declared checks in the berth" },
  { key: "u", label: "update", help: "update: merge the trunk into the berth" },
  {
    key: "a",
    label: "accept",
    help: "accept: land the berth on the trunk (through the landing queue)",
  },
  {
    key: "y",
    label: "approve",
    help: "approve: let its waiting entry land, or grant it: land when green",
  },
  {
    key: "w",
    label: "withdraw",
    help: "withdraw: take its entry out of the queue, or take back its grant",
  },
  { key: "r", label: "reclaim", help: "reclaim a contained berth (its branch is kept)" },
  { key: "p", label: "park", help: "park: tear the berth down, keep its branch, title and brief" },
  { key: "x", label: "drop", help: "drop: discard the berth" },
  { key: "s", label: "shell", help: "open a shell in the berth's folder" },
  { key: "?", label: "help", help: "this help" },
  { key: "q", label: "quit", help: "quit the desk" },
];

const LEGEND_GAP = "   ";
const LEGEND_MAX_LINES = 2;

/**
 * The key legend in at most two lines of `width` columns: every key when
 * they fit, else as many as fit on one line followed by `? help` and `q quit`
 * (the help pane lists them all).
 */
export function legendLines(width: number): string[] {
  const entries = LEGEND_KEYS.map((k) => `${k.key} ${k.label}`);
  const packed = pack(entries, width);
  if (packed.length <= LEGEND_MAX_LINES) return packed;
  const tail = LEGEND_KEYS.filter((k) => k.key === "?" || k.key === "q").map(
    (k) => `${k.key} ${k.label}`,
  );
  const head: string[] = [];
  for (const entry of entries) {
    if (tail.includes(entry)) continue;
    if ([...head, entry, ...tail].join(LEGEND_GAP).length > width) break;
    head.push(entry);
  }
  return [[...head, ...tail].join(LEGEND_GAP)];
}

function pack(entries: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const entry of entries) {
    const next = line === "" ? entry : `${line}${LEGEND_GAP}${entry}`;
    if (next.length <= width || line === "") line = next;
    else {
      lines.push(line);
      line = entry;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** The help pane (`?`): every key and what it does. */
export function helpLines(): string[] {
  const width = Math.max(...LEGEND_KEYS.map((k) => k.key.length));
  return [
    "keys:",
    ...LEGEND_KEYS.map((k) => `  ${k.key.padEnd(width)}  ${k.help}`),
    `${OVERLAP_MARK} before a row: the berth changes files another unlanded berth changes too (its detail says which)`,
    "every action shows its exact command and plan, and runs only after y",
  ];
}

/**
 * The keys in one chunk of input. Keys typed fast, held or pasted reach the
 * desk as one chunk ("jjj", "/log\r"); each is handled on its own. A chunk
 * with an escape sequence (an arrow key) is one key, as ink parsed it.
 */
export function splitKeys(input: string, key: Key): [string, Key][] {
  if (input.length <= 1 || input.includes("\u001b") || key.ctrl || key.meta) return [[input, key]];
  const plain: Key = {
    ...key,
    return: false,
    backspace: false,
    delete: false,
    tab: false,
    shift: false,
    escape: false,
  };
  return [...input].map((char): [string, Key] => {
    if (char === "\r" || char === "\n") return ["", { ...plain, return: true }];
    if (char === "\u007f" || char === "\b") return ["", { ...plain, backspace: true }];
    if (char === "\u0003") return ["c", { ...plain, ctrl: true }];
    if (char === "\t") return ["", { ...plain, tab: true }];
    return [char, { ...plain, shift: /[A-Z]/.test(char) }];
  });
}
