import type { TourData } from "../core/tour.js";
import { renderPruneResult } from "./prune-view.js";
import { renderStatus } from "./status-view.js";
import type { Colors } from "./style.js";

export function renderTour(data: TourData, c: Colors): string {
  const out: string[] = [];
  for (const chapter of data.chapters) {
    const title = chapter.title.startsWith("berth") ? `$ ${chapter.title}` : chapter.title;
    out.push(c.bold(title), chapter.text);
    if (chapter.kind === "status") out.push(renderStatus(chapter.status, c).trimEnd());
    if (chapter.kind === "prune") {
      const result = { ok: true, verb: "worktree prune", data: chapter.prune, hints: [] };
      out.push(renderPruneResult(result, c, chapter.dryRun).trimEnd());
    }
    out.push("");
  }
  return `${out.join("\n")}`;
}
