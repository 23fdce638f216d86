import type { Command, Command as CommandClass } from "@commander-js/extra-typings";
import type { CommandOutcome } from "./commands/outcome.js";
import type { Context } from "./context.js";
import { UserError } from "./errors.js";
import { shellCommand } from "./text.js";
import type { CommandSpec } from "./ui/completion.js";

/**
 * The declarations of the agent-facing verbs (spec section 12): the harness
 * hooks, `berth mcp`, and the shell habits (path, switch, shell-init,
 * completion). Wired into the program by cli-run.ts, which owns running a verb
 * and exiting; every verb module is still imported only when its verb runs.
 */

export interface CliWiring {
  execute(
    verb: string,
    options: Record<string, unknown>,
    run: (ctx: Context) => Promise<CommandOutcome>,
    target?: string | null,
  ): Promise<never>;
  common<T extends Command<unknown[], Record<string, unknown>>>(cmd: T): T;
  /** Ends the process with `code` (cli-run.ts exits the process). */
  exit(code: number): never;
}

export function declareHookVerbs(program: Command, wiring: CliWiring): void {
  const hook = program
    .command("hook")
    .description("run berth at an agent harness's lifecycle event (the event's JSON on stdin)")
    .addHelpText(
      "after",
      examples([
        `echo '{"worktree_name":"fix login"}' | berth hook claude-worktree-create`,
        `echo '{"worktree_path":"/repo.worktrees/fix-login-1a2b3c"}' | berth hook claude-worktree-remove`,
        "berth hook session-start < /dev/null",
      ]),
    );
  const hooks = [
    [
      "claude-worktree-create",
      "Claude Code WorktreeCreate: start a berth; print only its path",
      "hookWorktreeCreateCommand",
    ],
    [
      "claude-worktree-remove",
      "Claude Code WorktreeRemove: drop the berth unless it holds work (never --force)",
      "hookWorktreeRemoveCommand",
    ],
    [
      "session-start",
      "session start: set up the berth you are in, or say to start one from the main checkout",
      "hookSessionStartCommand",
    ],
  ] as const;
  for (const [name, description, entry] of hooks) {
    hook
      .command(name)
      .description(description)
      .option("--debug", "show stack traces and diagnostics")
      .action((opts) =>
        wiring.execute(
          `hook ${name}`,
          opts,
          async (ctx) => {
            const stdin = await (await import("./io/stdin.js")).readStdinText();
            return (await import("./commands/hook.js"))[entry](ctx, stdin);
          },
          null,
        ),
      );
  }
}

export function declareMcpVerb(program: Command, wiring: CliWiring): void {
  program
    .command("mcp")
    .description(
      "serve start, status, gate, update, accept, await, queue and logbook as MCP tools over stdio",
    )
    .addHelpText(
      "after",
      examples([
        "claude mcp add berth -- berth mcp",
        "codex mcp add berth -- berth mcp",
        `npx @modelcontextprotocol/inspector berth mcp`,
      ]),
    )
    .action(async () => {
      await (await import("./commands/mcp.js")).serveMcp();
      wiring.exit(0);
    });
}

export function declareShellVerbs(program: Command, wiring: CliWiring): void {
  wiring
    .common(
      program
        .command("path")
        .description("print a berth's folder (no argument: every berth, id and folder)")
        .argument("[berth]", "a berth id (or unique id prefix), path or branch"),
    )
    .addHelpText(
      "after",
      examples(["berth path fix-login", 'cd "$(berth path fix-lo)"', "berth path --json"]),
    )
    .action((target, opts) =>
      wiring.execute(
        "path",
        opts,
        async (ctx) => (await import("./commands/path.js")).pathCommand(ctx, target),
        target ?? null,
      ),
    );

  wiring
    .common(
      program
        .command("switch")
        .description("cd into a berth (through the shell wrapper: berth shell-init)")
        .argument("<berth>", "a berth id (or unique id prefix), path or branch"),
    )
    .addHelpText(
      "after",
      examples(['eval "$(berth shell-init bash)"', "berth switch fix-login", "berth switch main"]),
    )
    .action((target, opts) =>
      wiring.execute(
        "switch",
        opts,
        async (ctx) => (await import("./commands/path.js")).switchCommand(ctx, target),
        target,
      ),
    );

  wiring
    .common(
      program
        .command("shell-init")
        .description("print the shell function that makes berth switch change directory")
        .argument("<shell>", "bash, zsh or fish"),
    )
    .addHelpText(
      "after",
      examples([
        `echo 'eval "$(berth shell-init bash)"' >> ~/.bashrc`,
        `echo 'eval "$(berth shell-init zsh)"' >> ~/.zshrc`,
        "berth shell-init fish > ~/.config/fish/conf.d/berth.fish",
      ]),
    )
    .action((shell, opts) =>
      wiring.execute(
        "shell-init",
        opts,
        async (ctx) => (await import("./commands/path.js")).shellInitCommand(ctx, shell),
        null,
      ),
    );
}

export function declareCompletionVerb(program: Command, wiring: CliWiring): void {
  wiring
    .common(
      program
        .command("completion")
        .description("print shell completion for verbs, flags and berth ids")
        .argument("<shell>", "bash, zsh or fish"),
    )
    .addHelpText(
      "after",
      examples([
        `echo 'eval "$(berth completion bash)"' >> ~/.bashrc`,
        `echo 'eval "$(berth completion zsh)"' >> ~/.zshrc`,
        "berth completion fish > ~/.config/fish/completions/berth.fish",
      ]),
    )
    .action((shell, opts) =>
      wiring.execute(
        "completion",
        opts,
        async (ctx) =>
          (await import("./commands/completion.js")).completionCommand(
            ctx,
            shell,
            describeCommands(program),
          ),
        null,
      ),
    );
}

/** The declared command tree as completion reads it (visible commands and flags only). */
export function describeCommands(program: Command): CommandSpec[] {
  const help = program.createHelp();
  const specs: CommandSpec[] = [];
  const visit = (cmd: Command, path: string[]) => {
    const subcommands = help
      .visibleCommands(cmd as unknown as CommandClass)
      .filter((c) => c.name() !== "help");
    specs.push({
      path,
      names: [cmd.name(), ...cmd.aliases()],
      subcommands: subcommands.flatMap((c) => [c.name(), ...c.aliases()]),
      flags: help
        .visibleOptions(cmd as unknown as CommandClass)
        .flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)),
      takesBerth: cmd.registeredArguments.some((a) => a.name() === "berth"),
    });
    for (const sub of subcommands) visit(sub as unknown as Command, [...path, sub.name()]);
  };
  visit(program, []);
  return specs;
}

/**
 * `berth drop` and `berth prune` are easy to guess and are not verbs: they
 * refuse as a usage error (exit 2) whose next command is the real one, with
 * the arguments as typed.
 */
export function declareGuessedVerbs(program: Command, wiring: CliWiring): void {
  for (const name of ["drop", "prune", "reclaim"] as const) {
    program
      .command(name, { hidden: true })
      .allowUnknownOption()
      .allowExcessArguments()
      .argument("[args...]")
      .action((args) =>
        wiring.execute(
          name,
          { json: args.includes("--json") },
          async () => {
            throw new UserError(
              "usage",
              `berth ${name} is spelled berth worktree ${name}; nothing changed.`,
              { next: shellCommand(["berth", "worktree", name, ...args]) },
            );
          },
          null,
        ),
      );
  }
}

/** The "Examples:" block every verb's --help ends with. */
export function examples(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}
