import { existsSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../../errors.js";
import { shellCommand } from "../../text.js";

/**
 * `berth init --agents`: the one place the agents' workflow section is written
 * into a repository's instructions for agents: AGENTS.md (created when
 * missing) and CLAUDE.md when the repository has one. Appended once: a file
 * that already holds the marker is left as it is.
 */

export const AGENTS_MARKER = "<!-- berth:agents -->";

export const AGENTS_SECTION = `${AGENTS_MARKER}
## Working here with berth

Parallel work in this repository happens in berths: git worktrees with their own branch, port and
resources. Do not edit the main checkout.

1. Start: \`cd "$(berth start '<what you are doing>')"\` (or the MCP \`start\` tool), then work and
   commit there.
2. Gate: \`berth gate\` runs the declared checks and records a receipt (\`berth update\` first when
   the trunk moved).
3. Accept: \`berth accept\` hands the berth over for landing; a person approves unless a grant is
   configured.
4. Await: \`berth await --landed <id>\`; on exit 124 continue with \`berth await --resume <handle>\`.

Never drop, prune or reclaim berths: removing a berth is a person's decision.
`;

export interface AgentsFileOutcome {
  file: string;
  outcome: "appended" | "created" | "already present";
}

/** Which files the section would go to, and what would happen to each (reads only). */
export async function planAgentsSection(root: string): Promise<AgentsFileOutcome[]> {
  const files = [join(root, "AGENTS.md")];
  const claude = join(root, "CLAUDE.md");
  if (existsSync(claude)) files.push(claude);
  const outcomes: AgentsFileOutcome[] = [];
  for (const file of files) {
    const text = existsSync(file) ? await readInstructions(file) : null;
    outcomes.push({
      file,
      outcome:
        text === null ? "created" : text.includes(AGENTS_MARKER) ? "already present" : "appended",
    });
  }
  return outcomes;
}

/** An instructions file's text; one that cannot be read (a folder of that name) is refused, nothing written. */
async function readInstructions(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UserError(
      "precondition_failed",
      `Cannot read ${file} (${code}), so berth init --agents cannot tell whether it holds the agents' section; nothing changed. Make it a readable file, then run berth init --agents again.`,
      { next: shellCommand(["ls", "-ld", file]) },
    );
  }
}

export async function writeAgentsSection(planned: readonly AgentsFileOutcome[]): Promise<void> {
  for (const { file, outcome } of planned) {
    if (outcome === "already present") continue;
    const text = outcome === "created" ? "" : await readFile(file, "utf8");
    const separator = text === "" ? "" : text.endsWith("\n") ? "\n" : "\n\n";
    await appendFile(file, `${separator}${AGENTS_SECTION}`);
  }
}
