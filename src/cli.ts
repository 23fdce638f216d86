#!/usr/bin/env node
import { Command, CommanderError } from "@commander-js/extra-typings";
import type { CommandOutcome, HumanOutput } from "./commands/outcome.js";
import { type Context, processContext } from "./context.js";
import { UserError } from "./errors.js";
import type { VerbResult } from "./result.js";
import { renderJson } from "./ui/envelope.js";
import { renderRefusal } from "./ui/refusal.js";
import { colorsFor } from "./ui/style.js";
import { VERSION } from "./version.js";

/**
 * Argument wiring and the one place that turns results into output and an
 * exit code. Verb modules are imported only when their verb runs, so
 * `berth --help` and `berth status` never load what other verbs need.
 */

interface CommonOptions {
  json?: boolean;
  debug?: boolean;
}

type VerbRunner = (ctx: Context) => Promise<CommandOutcome>;

/**
 * Verbs that change something: each writes a begin and a finish event to the
 * logbook (unless `--dry-run`, which changes nothing). Keyed by the verb name
 * `execute` receives; pure observers (status, logbook) are never listed.
 */
const EFFECTFUL_VERBS: ReadonlySet<string> = new Set([
  "init",
  "start",
  "gate",
  "update",
  "accept",
  "await",
  "worktree setup",
  "worktree teardown",
  "worktree drop",
  "worktree prune",
]);

async function execute(
  verb: string,
  options: CommonOptions & Record<string, unknown>,
  run: VerbRunner,
): Promise<never> {
  const ctx = processContext(options.debug === true);
  const journal =
    EFFECTFUL_VERBS.has(verb) && options.dryRun !== true
      ? (await import("./core/logbook/journal.js")).createJournal(ctx, verb)
      : null;
  if (journal) ctx.journal = journal;
  let outcome: CommandOutcome;
  let thrown: unknown;
  try {
    outcome = await run(ctx);
  } catch (error) {
    thrown = error;
    outcome = failureOutcome(verb, error, ctx);
  }
  const { result } = outcome;
  await journal?.finish(result, thrown);
  if (options.json) {
    await writeFully(process.stdout, outcome.json ? outcome.json() : renderJson(result));
  } else {
    const human: HumanOutput = outcome.human(colorsFor(ctx.stdoutIsTTY, ctx.env));
    const hints = result.hints.map((hint) => `hint: ${hint}\n`).join("");
    await Promise.all([
      human.stdout ? writeFully(process.stdout, human.stdout) : undefined,
      writeFully(process.stderr, `${human.stderr ?? ""}${hints}`),
    ]);
  }
  process.exit(exitCodeFor(result));
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

function failureOutcome(verb: string, error: unknown, ctx: Context): CommandOutcome {
  const stderrColors = colorsFor(ctx.stderrIsTTY, ctx.env);
  if (error instanceof UserError) {
    const result: VerbResult = {
      ok: false,
      verb,
      data: error.data ?? null,
      ...(error.plan === undefined ? {} : { plan: error.plan as VerbResult["plan"] & object }),
      hints: [],
      error: {
        code: error.code,
        message: error.message,
        ...(error.next === undefined ? {} : { next: error.next }),
      },
    };
    if (ctx.debug && error.stack) ctx.stderr.write(`${error.stack}\n`);
    return {
      result,
      human: () => ({
        stderr: renderRefusal(
          verb,
          result.error as NonNullable<VerbResult["error"]>,
          error.nothingChanged,
          stderrColors,
        ),
      }),
    };
  }
  // Not a user mistake: a bug, or git failing in a way berth did not foresee.
  const err = error instanceof Error ? error : new Error(String(error));
  const result: VerbResult = {
    ok: false,
    verb,
    data: null,
    hints: ["this is a bug or an unexpected git failure; rerun with --debug for details"],
    error: { code: "internal", message: err.message },
  };
  return {
    result,
    human: () => ({
      stderr: `${stderrColors.red(`berth ${verb}: unexpected failure:`)} ${err.message}\n${
        ctx.debug ? `${err.stack ?? ""}\n` : "(rerun with --debug for the stack trace)\n"
      }`,
    }),
  };
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
      execute("init", opts, async (ctx) =>
        (await import("./commands/init.js")).initCommand(ctx, opts),
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
      "give up after this long, exit 124 (default 3300; 0 checks once)",
    )
    .action((opts) =>
      execute("await", opts, async (ctx) =>
        (await import("./commands/await.js")).awaitCommand(ctx, opts),
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
    .option("--dry-run", "show the plan and change nothing")
    .action((target, opts) =>
      execute("accept", opts, async (ctx) =>
        (await import("./commands/accept.js")).acceptCommand(ctx, target, opts),
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
      execute("worktree drop", opts, async (ctx) =>
        (await import("./commands/worktree-drop.js")).worktreeDropCommand(ctx, target, opts),
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
      execute("worktree prune", opts, async (ctx) =>
        (await import("./commands/worktree-prune.js")).worktreePruneCommand(ctx, opts),
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
          renderJson({
            ok: false,
            verb,
            data: null,
            hints: [],
            error: { code: "usage", message: error.message },
          }),
        );
      }
      process.exit(done ? 0 : 2);
    }
    throw error;
  }
}

await main(process.argv);
