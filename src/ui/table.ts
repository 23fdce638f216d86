/** Aligned columns; widths ignore ANSI color codes. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const all = [header, ...rows];
  const widths = header.map((_, col) =>
    Math.max(...all.map((row) => visibleLength(row[col] ?? ""))),
  );
  return all
    .map((row) =>
      row
        .map((cell, col) =>
          col === row.length - 1
            ? cell
            : cell + " ".repeat((widths[col] ?? 0) - visibleLength(cell)),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** Length as shown on a terminal: color codes take no room. */
export function visibleLength(text: string): number {
  return text.replace(ANSI, "").length;
}
