/**
 * The desk pane's lines broken to the terminal's width, so that nothing in
 * the pane is cut off: a command it shows must stay whole to be read and
 * copied. The list above keeps one row per berth and is cut instead.
 *
 * A command line (`$ ...`) breaks between its shell words, each broken row
 * ending with ` \`; a word wider than a row is split with a backslash-newline
 * (closing and reopening its single quotes). Either way the rows pasted into
 * a shell are still the one command. Any other line breaks at its last space
 * that fits, or within a word longer than the row. Continuation rows are
 * indented under their line. Widths count code points, as the desk does.
 */

const COMMAND = "$ ";
const CONTINUED = " \\";
const INDENT = "    ";
// Narrower than this, the desk is unusable anyway; each row still makes progress.
const NARROWEST = 20;

export function wrapPane(lines: readonly string[], columns: number): string[] {
  const width = Math.max(NARROWEST, columns);
  return lines.flatMap((line) =>
    line.startsWith(COMMAND) ? wrapCommand(line, width) : wrapText(line, width),
  );
}

function wrapText(line: string, width: number): string[] {
  const chars = [...line];
  if (chars.length <= width) return [line];
  const indent = " ".repeat(leadingSpaces(chars) + 2);
  const rows: string[] = [];
  let rest = chars;
  let prefix = "";
  while (prefix.length + rest.length > width) {
    const room = width - prefix.length;
    // The last space that fits, past any indentation; none: break inside the word.
    let cut = rest.lastIndexOf(" ", room);
    if (cut <= leadingSpaces(rest)) cut = room;
    rows.push(prefix + rest.slice(0, cut).join("").trimEnd());
    rest = rest.slice(cut);
    while (rest[0] === " ") rest = rest.slice(1);
    prefix = indent;
  }
  if (rest.length > 0) rows.push(prefix + rest.join(""));
  return rows;
}

function wrapCommand(line: string, width: number): string[] {
  const chars = [...line];
  if (chars.length <= width) return [line];
  const shape = commandShape(chars);
  const rows: string[] = [];
  let start = 0;
  let prefix = "";
  while (prefix.length + (chars.length - start) > width) {
    // Room for the row's text, keeping two columns for what ends it.
    const room = width - prefix.length - 2;
    let end = -1;
    for (const at of shape.breaks) {
      if (at <= start) continue;
      if (at - start > room) break;
      end = at;
    }
    if (end !== -1) {
      rows.push(`${prefix}${chars.slice(start, end).join("")}${CONTINUED}`);
      start = end + 1;
      prefix = INDENT;
      continue;
    }
    // One word wider than a row: split it where a backslash-newline joins it again, after a
    // quoted space or a slash if one fits. Inside single quotes the quote is closed before the
    // split and opened again after it. No indentation there: it would be part of the word.
    const cut = splitPoint(chars, shape, start, room);
    const quoted = shape.quoted[cut] === true;
    rows.push(`${prefix}${chars.slice(start, cut).join("")}${quoted ? "'\\" : "\\"}`);
    start = cut;
    prefix = quoted ? "'" : "";
    // The word ended at the split: the next row starts a new word, indented like any other.
    if (shape.breaks.includes(start)) {
      start += 1;
      prefix = INDENT;
    }
  }
  rows.push(prefix + chars.slice(start).join(""));
  return rows;
}

/** Where to split a word too wide for a row of `room` characters from `start`. */
function splitPoint(chars: readonly string[], shape: CommandShape, start: number, room: number) {
  let cut = start + room;
  // A closing quote at the edge goes on this row, so the next does not open with `''`.
  if (shape.quoted[cut] && chars[cut] === "'" && !shape.quoted[cut + 1]) return cut + 1;
  for (let at = cut; at > start + 1; at--) {
    const after = chars[at - 1];
    if ((after === "/" || (after === " " && shape.quoted[at - 1])) && !shape.escaped[at]) return at;
  }
  if (shape.escaped[cut]) cut -= 1;
  return cut;
}

interface CommandShape {
  /** The spaces between shell words: outside single quotes, not escaped. */
  breaks: number[];
  /** quoted[i]: a cut before character i falls inside single quotes. */
  quoted: boolean[];
  /** escaped[i]: character i is escaped by the backslash before it (no cut between them). */
  escaped: boolean[];
}

function commandShape(chars: readonly string[]): CommandShape {
  const shape: CommandShape = { breaks: [], quoted: [], escaped: [] };
  let inQuotes = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    shape.quoted[i] = inQuotes;
    if (inQuotes) {
      if (c === "'") inQuotes = false;
    } else if (c === "\\") {
      shape.escaped[i + 1] = true;
      shape.quoted[i + 1] = false;
      i++;
    } else if (c === "'") {
      inQuotes = true;
    } else if (c === " " && i >= COMMAND.length) {
      shape.breaks.push(i);
    }
  }
  return shape;
}

function leadingSpaces(chars: readonly string[]): number {
  let n = 0;
  while (chars[n] === " ") n++;
  return n;
}
