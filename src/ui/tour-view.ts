import type { TourData } from "../core/tour.js";
import { renderPruneData } from "./prune-view.js";
import { renderStatus } from "./status-view.js";
import type { Colors } from "./style.js";

export function renderTour(data: TourData, c: Colors): string {
  const out: string[] = [];
  for (const chapter of data.chapters) {
    const title = chapter.title.startsWith("berth") ? `$ ${chapter.title}` : chapter.title;
    out.push(c.bold(title), chapter.text);
    if (chapter.kind === "status") out.push(renderStatus(chapter.status, c).trimEnd());
    if (chapter.kind === "prune")
      out.push(renderPruneData(chapter.prune, chapter.dryRun, c).trimEnd());
    out.push("");
  }
  return `${out.join("\n")}`;
}
