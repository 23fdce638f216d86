import type { Context } from "../context.js";
import { followLogbook, type LogbookFilter, readLogbookEvents } from "../core/logbook/query.js";
import {
  renderLogbookFollowHeader,
  renderLogbookFollowRows,
  renderLogbookJsonLines,
  renderLogbookTable,
} from "../ui/logbook-view.js";
import { colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";
import { EFFECTFUL_VERBS } from "./run-verb.js";

export async function logbookCommand(
  ctx: Context,
  options: LogbookFilter & { follow?: boolean; json?: boolean },
): Promise<CommandOutcome> {
  const filter: LogbookFilter = {
    branch: options.branch,
    verb: options.verb,
    since: options.since,
  };
  if (options.follow) return follow(ctx, filter, options.json === true);
  const result = await readLogbookEvents(ctx, filter);
  const events = result.data?.events ?? [];
  if (options.verb !== undefined && !EFFECTFUL_VERBS.has(options.verb)) {
    // No event can ever match: say why, rather than a bare "No logbook events."
    result.hints.push(
      `the logbook records only verbs that change something, and "${options.verb}" is none of them: ${[...EFFECTFUL_VERBS].join(", ")}`,
    );
  }
  return {
    result,
    human: (c) =>
      events.length === 0
        ? { stderr: "No logbook events.\n" }
        : { stdout: renderLogbookTable(events, c) },
    json: () => renderLogbookJsonLines(events),
  };
}

/** Streams until SIGINT or SIGTERM, then ends like any observation (exit 0). */
async function follow(ctx: Context, filter: LogbookFilter, json: boolean): Promise<CommandOutcome> {
  const c = colorsFor(ctx.stdoutIsTTY, ctx.env);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // A reader that went away (`| head`) ends the stream like an interrupt.
  ctx.stdout.once("error", onSignal);
  let headed = json;
  const print = (events: Parameters<typeof renderLogbookJsonLines>[0]) => {
    if (json) {
      ctx.stdout.write(renderLogbookJsonLines(events));
      return;
    }
    if (!headed) ctx.stdout.write(renderLogbookFollowHeader(c));
    headed = true;
    ctx.stdout.write(renderLogbookFollowRows(events, c));
  };
  try {
    const result = await followLogbook(ctx, filter, print, stop.signal);
    return { result, human: () => ({}), json: () => "" };
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    ctx.stdout.off("error", onSignal);
  }
}
