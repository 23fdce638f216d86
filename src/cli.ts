#!/usr/bin/env node
import { Command, CommanderError } from "@commander-js/extra-typings";
import type { CommandOutcome } from "./commands/outcome.js";
import { type Context, processContext } from "./context.js";
import { UserError } from "./errors.js";
import { failureResult, type VerbResult } from "./result.js";
import { renderJson } from "./ui/envelope.js";
import { colorsFor } from "./ui/style.js";
import { VERSION } from "./version.js";

/**
 * Argument wiring and the one place that prints an outcome and exits. Verbs
 * run through commands/run-verb.ts (as the desk's actions do); it and the
 * verb modules are imported only when a verb runs, so `berth --help` and
 * `berth status` never load what other verbs need.
 */

interface CommonOptions {
  json?: boolean;
  debug?: boolean;
}

type VerbRunner = (ctx: Context) => Promise<CommandOutcome>;

/** Runs the verb (commands/run-verb.ts), prints its outcome, and exits with its code. */
async function execute(
  verb: string,
  options: CommonOptions & Record<string, unknown>,
  run: VerbRunner,
  /** The berth argument as typed (the logbook's target); null: the verb is about no berth. */
  target?: string | null,
): Promise<never> {
  const { runVerb, humanOutput } = await import("./commands/run-verb.js");
  const ctx = processContext(options.debug === true);
  const outcome = await runVerb(verb, ctx, { dryRun: options.dryRun === true, target }, run);
  const printed = options.json
    ? { stdout: outcome.json ? outcome.json() : renderJson(outcome.result), stderr: "" }
    : humanOutput(outcome, {
        stdout: colorsFor(ctx.stdoutIsTTY, ctx.env),
        stderr: colorsFor(ctx.stderrIsTTY, ctx.env),
      });
  await Promise.all([
    writeFully(process.stdout, printed.stdout),
    writeFully(process.stderr, printed.stderr),
  ]);
  process.exit(exitCodeFor(outcome.result));
}

/**
 * Writes and waits until the stream has handed the text to the OS. A pipe's
 * write is asynchronous once its buffer (64 KiB) is full, and process.exit
 * would otherwise cut a large `--json` document short for a slow reader.
 */
function writeFully(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text === "") return Promise.resolve();
  // Resolves on error too (e.g. the reader went away): the exit code still tells.
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

/** 0 done, 1 refused or failed, 2 usage, or the verb's own (124 for an unmet await). */
function exitCodeFor(result: VerbResult): number {
  if (result.exitCode !== undefined) return result.exitCode;
  if (result.ok) return 0;
  return result.error?.code === "usage" ? 2 : 1;
}

function common<T extends Command<unknown[], Record<string, unknown>>>(cmd: T): T {
  cmd
    .option("--json", "print one JSON document on stdout")
    .option("--debug", "show stack traces and diagnostics");
  return cmd;
}

export function buildProgram(): Command {
  const program = new Command("berth")
    .description(
      "A fleet of git worktrees for people and coding agents working on one repository in parallel.",
    )
    .version(VERSION, "-V, --version")
    .showHelpAfterError("(run berth --help for usage)")
    .exitOverride();

  common(program.command("init").description("write a commented berth.toml at the repository root"))
    .option("--dry-run", "show what would be written")
    .action((opts) =>
      execute(
        "init",
        opts,
        async (ctx) => (await import("./commands/init.js")).initCommand(ctx, opts),
        null,
      ),
    );

  common(
    program
      .command("start")
      .description("create a berth: a worktree on its own branch, port and resources")
      .argument("[name]", "what the work is about; becomes the id"),
  )
    .option("--from <ref>", "fork from this branch, tag or commit instead of the trunk")
    .option("--dry-run", "show the plan and change nothing")
    .action((name, opts) =>
      execute("start", opts, async (ctx) =>
        (await import("./commands/start.js")).startCommand(ctx, name, opts),
      ),
    );

  common(program.command("tour").description("a guided demonstration on a throwaway repository"))
    .option("--keep", "keep the throwaway repository afterwards")
    .action((opts) =>
      execute("tour", opts, async (ctx) =>
        (await import("./commands/tour.js")).tourCommand(ctx, opts),
      ),
    );

  common(program.command("status").description("survey the fleet (or, inside a berth, that berth)"))
    .option("--local", "only the checkout you are in")
    .option("--all", "the whole fleet, even from inside a berth")
    .action((opts) =>
      execute("status", opts, async (ctx) =>
        (await import("./commands/status.js")).statusCommand(ctx, opts),
      ),
    );

  common(
    program
      .command("desk")
      .description("the interactive terminal view of the fleet, with per-berth actions"),
  ).action((opts) =>
    execute("desk", opts, async (ctx) =>
      (await import("./commands/desk.js")).deskCommand(ctx, opts),
    ),
  );

  common(program.command("gate").description("run the declared checks here and record a receipt"))
    .option("--dry-run", "show the checks and change nothing")
    .action((opts) =>
      execute("gate", opts, async (ctx) =>
        (await import("./commands/gate.js")).gateCommand(ctx, opts),
      ),
    );

  common(program.command("update").description("merge the trunk (or --from <ref>) into this berth"))
    .option("--from <ref>", "merge this branch, tag or commit instead of the trunk")
    .option("--dry-run", "show what would be merged and change nothing")
    .action((opts) =>
      execute("update", opts, async (ctx) =>
        (await import("./commands/update.js")).updateCommand(ctx, opts),
      ),
    );

  common(
    program
      .command("await")
      .description("wait until a berth is green, a branch has landed, or the trunk moved"),
  )
    .option(
      "--green <berth>",
      "until this berth has an honored gate receipt for its tip (or landed)",
    )
    .option("--landed <berth>", "until this berth's tip is reachable from the trunk")
    .option("--trunk-moved", "until the trunk's tip differs from its tip now")
    .option(
      "--timeout <seconds>",
      "give up after this long, exit 124 with a resume handle (default 3300; 0 checks once)",
    )
    .option("--resume <handle>", "continue a wait that timed out, with the same pins (data.resume)")
    .action((opts) =>
      execute(
        "await",
        opts,
        async (ctx) => (await import("./commands/await.js")).awaitCommand(ctx, opts),
        opts.green ?? opts.landed ?? (opts.trunkMoved ? null : undefined),
      ),
    );

  common(program.command("logbook").description("print the logbook: begin/finish events of verbs"))
    .option("--follow", "keep printing new events until interrupted")
    .option("--branch <branch>", "only events about this branch")
    .option("--verb <verb>", 'only this verb (e.g. "start", "worktree drop")')
    .option("--since <time>", "only events since an ISO time or an age like 30m, 2h, 3d")
    .action((opts) =>
      execute("logbook", opts, async (ctx) =>
        (await import("./commands/logbook.js")).logbookCommand(ctx, opts),
      ),
    );

  common(
    program
      .command("accept")
      .description("land a berth: fast-forward the trunk to its proved tip, then tear it down")
      .argument("[berth]", "a berth id, path or branch (default: the berth you are in)"),
  )
    .option("--yes", "answer the confirmation")
    .option(
      "--no-wait",
      "submit to the landing queue and return (without --yes it awaits approval)",
    )
    .option("--dry-run", "show the plan and change nothing")
    .action((target, opts) =>
      execute(
        "accept",
        opts,
        async (ctx) => (await import("./commands/accept.js")).acceptCommand(ctx, target, opts),
        target,
      ),
    );

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
      .description("take a berth's entry out of the landing queue (the berth is untouched)")
      .argument("<berth>", "a berth id or branch"),
  ).action((target, _opts, cmd) =>
    execute(
      "queue withdraw",
      cmd.optsWithGlobals(),
      async (ctx) => (await import("./commands/queue.js")).queueWithdrawCommand(ctx, target),
      target,
    ),
  );

  const worktree = program
    .command("worktree")
    .description("the lifecycle of berths: setup, teardown, drop, prune");

  common(
    worktree
      .command("setup")
      .description("re-run convergent setup in this berth (resource ensure, setup ensure)"),
  )
    .option("--dry-run", "show the plan and change nothing")
    .action((opts) =>
      execute("worktree setup", opts, async (ctx) =>
        (await import("./commands/worktree-setup.js")).worktreeSetupCommand(ctx, opts),
      ),
    );

  common(
    worktree.command("teardown").description("destroy this berth's resources, keep its checkout"),
  )
    .option("--yes", "answer the confirmation")
    .option("--dry-run", "show the plan and change nothing")
    .action((opts) =>
      execute("worktree teardown", opts, async (ctx) =>
        (await import("./commands/worktree-teardown.js")).worktreeTeardownCommand(ctx, opts),
      ),
    );

  common(
    worktree
      .command("drop")
      .description("discard a berth: teardown, remove its checkout, delete its branch")
      .argument("<berth>", "a berth id, path or branch"),
  )
    .option("--force", "also discard uncommitted changes and commits not on the trunk")
    .option("--yes", "answer the confirmation")
    .option("--dry-run", "show the plan and change nothing")
    .action((target, opts) =>
      execute(
        "worktree drop",
        opts,
        async (ctx) =>
          (await import("./commands/worktree-drop.js")).worktreeDropCommand(ctx, target, opts),
        target,
      ),
    );

  common(
    worktree
      .command("prune")
      .description(
        "tidy the fleet: stale metadata, landed berths and branches, orphaned resources",
      ),
  )
    .option("--contained", "also reclaim contained berths (their branch refs are kept)")
    .option("--yes", "answer the confirmation")
    .option("--dry-run", "show the plan and change nothing")
    .action((opts) =>
      execute(
        "worktree prune",
        opts,
        async (ctx) =>
          (await import("./commands/worktree-prune.js")).worktreePruneCommand(ctx, opts),
        null,
      ),
    );

  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    // A bare `berth` or a group without its subcommand.
    program.outputHelp({ error: true });
    process.exit(2);
  } catch (error) {
    if (error instanceof CommanderError) {
      const done = ["commander.helpDisplayed", "commander.version"].includes(error.code);
      if (!done && argv.includes("--json")) {
        const verb = argv.slice(2).find((a) => !a.startsWith("-")) ?? "berth";
        await writeFully(
          process.stdout,
          renderJson(failureResult(verb, new UserError("usage", error.message))),
        );
      }
      process.exit(done ? 0 : 2);
    }
    throw error;
  }
}

await main(process.argv);
