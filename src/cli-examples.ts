import type { Command } from "@commander-js/extra-typings";
import { examples } from "./cli-agents.js";
import { shellCommand } from "./text.js";

/**
 * The examples every verb's `--help` ends with (two or three real command
 * lines each), keyed by the words after `berth`. The agent verbs declare
 * theirs beside their declarations in cli-agents.ts.
 */
const EXAMPLES: Record<string, readonly string[]> = {
  "": ['cd "$(berth start fix-login)"', "berth status", "berth accept"],
  init: ["berth init", "berth init --dry-run", "berth init --agents"],
  start: [
    "berth start 'fix the login form'",
    'cd "$(berth start fix-login)"',
    "berth start hotfix --from v1.2.0",
  ],
  describe: [
    "berth describe fix-login-1a2b3c",
    "berth describe fix-login-1a2b3c --title 'Login form: validation'",
    "berth describe fix-login-1a2b3c --brief notes.md",
  ],
  tour: ["berth tour", "berth tour --keep"],
  status: ["berth status", "berth ls --all", "berth status --json"],
  desk: ["berth desk", "NO_COLOR=1 berth desk"],
  gate: ["berth gate", "berth gate --dry-run", "berth gate --json"],
  update: ["berth update", "berth update --from origin/main", "berth update --dry-run"],
  await: [
    "berth await --green fix-login-1a2b3c",
    "berth await --landed fix-login-1a2b3c --timeout 600",
    "berth await --resume 0123456789abcdef",
  ],
  logbook: [
    "berth logbook --since 2h",
    "berth logbook --verb 'worktree drop'",
    "berth logbook --follow --json",
  ],
  accept: ["berth accept", "berth accept fix-login-1a2b3c --yes", "berth accept --no-wait"],
  queue: ["berth queue", "berth queue --json", "berth queue approve fix-login-1a2b3c"],
  "queue run": ["berth queue run", "berth queue run --json"],
  "queue approve": [
    "berth queue approve fix-login-1a2b3c",
    "berth queue approve berth/fix-login-1a2b3c --json",
  ],
  "queue withdraw": [
    "berth queue withdraw fix-login-1a2b3c",
    "berth queue withdraw fix-login-1a2b3c --json",
  ],
  worktree: ["berth worktree prune --dry-run", "berth worktree drop fix-login-1a2b3c"],
  "worktree setup": ["berth worktree setup", "berth worktree setup --dry-run"],
  "worktree teardown": ["berth worktree teardown", "berth worktree teardown --yes"],
  "worktree park": [
    "berth worktree park fix-login-1a2b3c",
    "berth worktree park fix-login-1a2b3c --dry-run",
    "berth start --from berth/fix-login-1a2b3c",
  ],
  "worktree drop": [
    "berth worktree drop fix-login-1a2b3c",
    "berth worktree drop fix-login-1a2b3c --force --yes",
    "berth worktree drop fix-login-1a2b3c --dry-run",
  ],
  "worktree prune": [
    "berth worktree prune --dry-run",
    "berth worktree prune --yes",
    "berth worktree prune --contained --yes",
  ],
  "worktree reclaim": [
    "berth worktree reclaim fix-login-1a2b3c",
    "berth worktree reclaim fix-login-1a2b3c --dry-run",
    "berth worktree reclaim fix-login-1a2b3c --yes",
  ],
  "hook claude-worktree-create": [
    `echo '{"worktree_name":"fix login","cwd":"'"$PWD"'"}' | berth hook claude-worktree-create`,
    `echo '{"name":"fix login"}' | berth hook claude-worktree-create`,
  ],
  "hook claude-worktree-remove": [
    `echo '{"worktree_path":"'"$(berth path fix-lo)"'"}' | berth hook claude-worktree-remove`,
    `echo '{"worktree_path":"/repo.worktrees/fix-login-1a2b3c"}' | berth hook claude-worktree-remove`,
  ],
  "hook session-start": [
    "berth hook session-start < /dev/null",
    `echo '{"cwd":"'"$PWD"'","source":"startup"}' | berth hook session-start`,
  ],
};

/** Adds each declared command's examples to the end of its --help, and its help to its usage errors. */
export function addHelpTexts(program: Command): void {
  const visit = (cmd: Command, path: string[]) => {
    const lines = EXAMPLES[path.join(" ")];
    if (lines !== undefined) cmd.addHelpText("after", examples(lines));
    // Each command's own: the program's line would send `berth start --bogus` to the verb list.
    cmd.showHelpAfterError(`(run ${shellCommand(["berth", ...path, "--help"])} for usage)`);
    for (const sub of cmd.commands) visit(sub as unknown as Command, [...path, sub.name()]);
  };
  visit(program, []);
}
