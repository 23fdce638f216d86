import type { VerbResult } from "../result.js";
import type { Colors } from "../ui/style.js";

/** Human rendering, split by stream: data on stdout, the story on stderr. */
export interface HumanOutput {
  stdout?: string;
  stderr?: string;
}

/** What a command hands back to its runner: the result, and how to show it to a person. */
export interface CommandOutcome<D = unknown> {
  result: VerbResult<D>;
  /**
   * The human text. `colors` suit stdout; `stderrColors` (default `colors`)
   * suit stderr, for output that only goes there (a refusal).
   */
  human: (colors: Colors, stderrColors?: Colors) => HumanOutput;
  /** `--json` output other than the one envelope (only `berth logbook`'s JSON Lines). */
  json?: () => string;
}
