import { Command } from "@commander-js/extra-typings";
import {
  type CliWiring,
  declareCompletionVerb,
  declareGuessedVerbs,
  declareHookVerbs,
  declareMcpVerb,
  declareShellVerbs,
} from "./cli-agents.js";
import { addHelpTexts } from "./cli-examples.js";
import { refuseOptionsAsValues } from "./cli-option-values.js";
import { declareQueueVerbs } from "./cli-queue.js";
import type { CommandOutcome } from "./commands/outcome.js";
import type { Context } from "./context.js";
import { VERSION } from "./version.js";

/**
 * The CLI's declarations: every verb, its arguments and options. cli-run.ts
 * builds it with the executor that runs a verb, prints and exits;
 * scripts/man-page.ts builds it to write berth.1 and runs nothing.
 */

export interface CommonOptions {
  json?: boolean;
  debug?: boolean;
}

export type VerbRunner = (ctx: Context) => Promise<CommandOutcome>;

/** Runs one verb, prints its outcome and exits (cli-execute.ts). */
export type VerbExecutor = (
  verb: string,
  options: CommonOptions & Record<string, unknown>,
  run: VerbRunner,
  /** The berth argument as typed (the logbook's target); null: the verb is about no berth. */
  target?: string | null,
) => Promise<never>;

function common<T extends Command<unknown[], Record<string, unknown>>>(cmd: T): T {
  cmd
    .option("--json", "print one JSON document on stdout")
    .option("--debug", "show stack traces and diagnostics");
  return cmd;
}

/** Ends the process (cli-run.ts, for help and usage errors); the man page generator never calls it. */
export type ProcessExit = (code: number) => never;

const NO_EXIT: ProcessExit = () => {
  throw new Error("this program was built to be read, not run");
};

/**
 * The top-level verb a command line invokes, when its first word names one
 * (aliases included): only that verb then needs declaring. Undefined for
 * anything else (no verb, a flag first, `help`, a typo that commander should
 * answer with its suggestions), and for `completion`, which describes them all.
 */
export function invokedVerb(args: readonly string[]): string | undefined {
  const word = args[0];
  if (word === undefined) return undefined;
  const verb = VERB_ALIASES[word] ?? word;
  return VERBS.has(verb) ? verb : undefined;
}

const VERBS: ReadonlySet<string> = new Set([
  ...["init", "start", "describe", "tour", "status", "desk", "gate", "update", "await"],
  ...["logbook", "accept", "worktree", "queue", "hook", "mcp", "path", "switch", "shell-init"],
  ...["drop", "prune", "reclaim"],
]);
const VERB_ALIASES: Readonly<Record<string, string>> = { ls: "status", list: "status" };

/**
 * Declares every verb, or with `only` (invokedVerb) just that one: the help
 * and errors of one verb never mention another, so they read the same, and
 * `berth status` skips declaring the rest (docs/performance.md, start-up).
 */
export function buildProgram(
  execute: VerbExecutor,
  exit: ProcessExit = NO_EXIT,
  only?: string,
): Command {
  const declares = (...verbs: string[]) => only === undefined || verbs.includes(only);
  const program = new Command("berth")
    .description(
      "A fleet of git worktrees for people and coding agents working on one repository in parallel.",
    )
    .version(VERSION, "-V, --version")
    .exitOverride();

  if (declares("init")) {
    common(
      program.command("init").description("write a commented berth.toml at the repository root"),
    )
      .option("--dry-run", "show what would be written")
      .option("--agents", "also append berth's workflow for agents to AGENTS.md (and CLAUDE.md)")
      .option(
        "--untracked-cache",
        "also set git's core.untrackedCache (after git's filesystem test), for large checkouts",
      )
      .action((opts) =>
        execute(
          "init",
          opts,
          async (ctx) => (await import("./commands/init.js")).initCommand(ctx, opts),
          null,
        ),
      );
  }

  if (declares("start")) {
    common(
      program
        .command("start")
        .description("create a berth: a worktree on its own branch, port and resources")
        .argument("[name]", "what the work is about; becomes the id"),
    )
      .option(
        "--from <ref>",
        "fork from this branch, tag or commit instead of the trunk (a parked branch is resumed)",
      )
      .option("--title <text>", "a one-line title, shown by status and the desk")
      .option("--brief <file>", "a longer description, from a file or - (stdin)")
      .option("--dry-run", "show the plan and change nothing")
      .action((name, opts) =>
        execute("start", opts, async (ctx) =>
          (await import("./commands/start.js")).startCommand(ctx, name, opts),
        ),
      );
  }

  if (declares("describe")) {
    common(
      program
        .command("describe")
        .description("show a berth's title and brief, or change them")
        .argument("<berth>", "a berth id, path or branch (a parked branch too)"),
    )
      .option("--title <text>", "set the one-line title (an empty one clears it)")
      .option("--brief <file>", "set the brief from a file or - (stdin); an empty one clears it")
      .action((target, opts) =>
        // Only a change is logged: showing the title and brief is an observation.
        execute(
          "describe",
          { ...opts, dryRun: opts.title === undefined && opts.brief === undefined },
          async (ctx) =>
            (await import("./commands/describe.js")).describeCommand(ctx, target, opts),
          target,
        ),
      );
  }

  if (declares("tour")) {
    common(program.command("tour").description("a guided demonstration on a throwaway repository"))
      .option("--keep", "keep the throwaway repository afterwards")
      .action((opts) =>
        execute("tour", opts, async (ctx) =>
          (await import("./commands/tour.js")).tourCommand(ctx, opts),
        ),
      );
  }

  if (declares("status")) {
    common(
      program
        .command("status")
        .aliases(["ls", "list"])
        .description("survey the fleet (or, inside a berth, that berth)"),
    )
      .option("--local", "only the checkout you are in")
      .option("--all", "the whole fleet, even from inside a berth")
      .option("--remote", "also berth branches on [remote] with no checkout here (fetches)")
      .action((opts) =>
        execute("status", opts, async (ctx) =>
          (await import("./commands/status.js")).statusCommand(ctx, opts),
        ),
      );
  }

  if (declares("desk")) {
    common(
      program
        .command("desk")
        .description("the interactive terminal view of the fleet, with per-berth actions"),
    ).action((opts) =>
      execute("desk", opts, async (ctx) =>
        (await import("./commands/desk.js")).deskCommand(ctx, opts),
      ),
    );
  }

  if (declares("gate")) {
    common(program.command("gate").description("run the declared checks here and record a receipt"))
      .option("--dry-run", "show the checks and change nothing")
      .action((opts) =>
        execute("gate", opts, async (ctx) =>
          (await import("./commands/gate.js")).gateCommand(ctx, opts),
        ),
      );
  }

  if (declares("update")) {
    common(
      program.command("update").description("merge the trunk (or --from <ref>) into this berth"),
    )
      .option("--from <ref>", "merge this branch, tag or commit instead of the trunk")
      .option("--dry-run", "show what would be merged and change nothing")
      .action((opts) =>
        execute("update", opts, async (ctx) =>
          (await import("./commands/update.js")).updateCommand(ctx, opts),
        ),
      );
  }

  if (declares("await")) {
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
      .option(
        "--resume <handle>",
        "continue a wait that timed out, with the same pins (data.resume)",
      )
      .option("--remote", "answer from [remote]: fetch the branch, the trunk and the receipt notes")
      .action((opts) =>
        execute(
          "await",
          opts,
          async (ctx) => (await import("./commands/await.js")).awaitCommand(ctx, opts),
          opts.green ?? opts.landed ?? (opts.trunkMoved ? null : undefined),
        ),
      );
  }

  if (declares("logbook")) {
    common(
      program.command("logbook").description("print the logbook: begin/finish events of verbs"),
    )
      .option("--follow", "keep printing new events until interrupted")
      .option("--branch <branch>", "only events about this branch")
      .option("--verb <verb>", 'only this verb (e.g. "start", "worktree drop")')
      .option("--since <time>", "only events since an ISO time or an age like 30m, 2h, 3d")
      .action((opts) =>
        execute("logbook", opts, async (ctx) =>
          (await import("./commands/logbook.js")).logbookCommand(ctx, opts),
        ),
      );
  }

  if (declares("accept")) {
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
  }

  if (declares("worktree")) {
    const worktree = program
      .command("worktree")
      .description("the lifecycle of berths: setup, teardown, park, drop, prune, reclaim");

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
        .command("park")
        .description(
          "shelve a berth: teardown and remove its checkout, keep its branch, title and brief",
        )
        .argument("<berth>", "a berth id, path or branch"),
    )
      .option("--yes", "answer the confirmation")
      .option("--dry-run", "show the plan and change nothing")
      .action((target, opts) =>
        execute(
          "worktree park",
          opts,
          async (ctx) =>
            (await import("./commands/worktree-park.js")).worktreeParkCommand(ctx, target, opts),
          target,
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

    common(
      worktree
        .command("reclaim")
        .description(
          "reclaim one contained berth: remove its checkout, keep its branch ref (as prune --contained)",
        )
        .argument("<berth>", "a berth id, path or branch"),
    )
      .option("--yes", "answer the confirmation")
      .option("--dry-run", "show the plan and change nothing")
      .action((target, opts) =>
        execute(
          "worktree reclaim",
          opts,
          async (ctx) =>
            (await import("./commands/worktree-reclaim.js")).worktreeReclaimCommand(
              ctx,
              target,
              opts,
            ),
          target,
        ),
      );
  }

  const wiring: CliWiring = { execute, common, exit };
  if (declares("queue")) declareQueueVerbs(program, wiring);
  if (declares("hook")) declareHookVerbs(program, wiring);
  if (declares("mcp")) declareMcpVerb(program, wiring);
  if (declares("path", "switch", "shell-init")) declareShellVerbs(program, wiring);
  if (declares()) declareCompletionVerb(program, wiring);
  if (declares("drop", "prune", "reclaim")) declareGuessedVerbs(program, wiring);
  addHelpTexts(program);
  refuseOptionsAsValues(program);
  return program;
}
