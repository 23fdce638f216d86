import type { DeskDetail } from "../../core/desk/detail.js";
import type { DeskAction, DeskItem, DeskModel } from "../../core/desk/model.js";

/**
 * What the desk's components are given. They render these and pass keys
 * back; every decision (grouping, what an action plans, whether it may run)
 * is made behind this interface by the same code the CLI runs.
 */

export interface DeskSnapshot {
  model: DeskModel;
  /** The repository's main checkout, for the header. */
  mainPath: string;
  readAt: Date;
  /** The survey's hints (what `berth status` prints after its table): shown while no pane is open. */
  hints: string[];
}

/** An action ready to run: the exact CLI command, its plan, and the question. */
export interface ConfirmableAction {
  kind: "confirm";
  action: DeskAction;
  /** The CLI command that does the same, exactly as a person would type it. */
  command: string;
  /** Where the desk's run differs in scope from the command, said plainly; else null. */
  note: string | null;
  /** What is kept and what is destroyed, as the CLI's confirmation prints it. */
  planText: string;
  /** e.g. "Drop a-1a2b3c?" (answered [y/N], No by default). */
  question: string;
  /** Runs it (the desk confirmed). `progress` receives output lines as they come. */
  apply(signal: AbortSignal, progress: (line: string) => void): Promise<ActionResult>;
  /** Not confirmed: nothing runs, and the logbook records the refusal like the CLI's. */
  decline(): Promise<void>;
}

export type ActionProposal =
  | ConfirmableAction
  /** The verb refused while planning (nothing changed): its refusal, as the CLI prints it. */
  | { kind: "refused"; action: DeskAction; command: string; text: string };

export interface ActionResult {
  ok: boolean;
  /** What the CLI would have printed (stdout, then stderr and hints). */
  text: string;
}

export interface DeskController {
  /** Receives every fresh reading (or the error of a failed one); returns the unsubscribe. */
  subscribe(listener: (update: DeskSnapshot | Error) => void): () => void;
  /** The latest reading. */
  current(): DeskSnapshot;
  /** Reads again now (after an action). */
  refresh(): Promise<void>;
  detail(item: DeskItem): Promise<DeskDetail>;
  /** Why the action is not offered on the item (a sentence), or null. */
  unavailable(item: DeskItem | undefined, action: DeskAction): string | null;
  propose(action: DeskAction, item: DeskItem): Promise<ActionProposal>;
}

/** The desk's own state that survives suspending it (for a shell) and re-mounting. */
export interface DeskSession {
  selectedKey: string | null;
  selectedIndex: number;
  detailOpen: boolean;
  /** The row filter (`/`), "" for none. */
  filter: string;
  /** Shown once after re-mounting (e.g. "back from the shell in ..."). */
  message: string | null;
}

/** How a mounted desk ended: quit, or suspended to open a shell in a berth's folder. */
export type DeskExit = { kind: "quit" } | { kind: "shell"; path: string; id: string };
