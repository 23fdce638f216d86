import type { Command } from "@commander-js/extra-typings";
import type { CliWiring } from "./cli-agents.js";

/**
 * The declarations of the landing queue's verbs (spec section 11): `berth
 * queue` lists it, `run` drains it, `approve` and `withdraw` act on one
 * berth's entry. The verb module is imported only when one of them runs.
 */
export function declareQueueVerbs(program: Command, wiring: CliWiring): void {
  const { execute, common } = wiring;
  const queue = common(
    program
      .command("queue")
      .description("the landing queue: entries in order, their state and why one was rejected"),
  ).action((opts) =>
    execute(
      "queue",
      opts,
      async (ctx) => (await import("./commands/queue.js")).queueListCommand(ctx),
      null,
    ),
  );
  common(
    queue.command("run").description("drain the landing queue: land or reject every entry"),
  ).action((_opts, cmd) =>
    execute(
      "queue run",
      cmd.optsWithGlobals(),
      async (ctx) => (await import("./commands/queue.js")).queueRunCommand(ctx),
      null,
    ),
  );
  common(
    queue
      .command("approve")
      .description("let a berth's entry land (before it is green: land when green)")
      .argument("<berth>", "a berth id or branch"),
  ).action((target, _opts, cmd) =>
    execute(
      "queue approve",
      cmd.optsWithGlobals(),
      async (ctx) => (await import("./commands/queue.js")).queueApproveCommand(ctx, target),
      target,
    ),
  );
  common(
    queue
      .command("withdraw")
      .description(
        "take a berth's entry out of the landing queue, or its standing grant back (the berth is untouched)",
      )
      .argument("<berth>", "a berth id or branch"),
  ).action((target, _opts, cmd) =>
    execute(
      "queue withdraw",
      cmd.optsWithGlobals(),
      async (ctx) => (await import("./commands/queue.js")).queueWithdrawCommand(ctx, target),
      target,
    ),
  );
}
