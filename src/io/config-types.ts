/** The fully defaulted shape of `berth.toml` (spec section 3). */

export interface ResourceConfig {
  name: string;
  create: string;
  destroy: string;
  ensure: string;
  required: boolean;
  gc: boolean;
}

export interface GateCheckConfig {
  name: string;
  run: string;
  after: string[];
  /** Per-check override of `[gate].timeout_s`. */
  timeout_s: number | null;
}

export interface Config {
  /** Absolute path of the file read, or null when the repository has none. */
  file: string | null;
  repository: {
    /** null = detect (origin/HEAD's branch, else main, else master). */
    trunk: string | null;
    branch_prefix: string;
  };
  worktree: {
    root: string;
    env_files: string[];
    inherit_env: string[];
    port_base: number;
    port_span: number;
    setup: { steps: string[]; ensure: string[] };
    /** In file order. */
    resources: ResourceConfig[];
  };
  gate: {
    fail_fast: boolean;
    timeout_s: number;
    checks: GateCheckConfig[];
    /** At most this many gates at once across the fleet; 0 = the number of cores (gate.ts resolves it). */
    capacity: { max_parallel: number };
  };
  /** How the landing queue lands (spec section 11). */
  acceptance: {
    /** How many queued entries one integration commit carries. */
    batch: number;
    /**
     * The standing grant: every submitted entry (an agent's accept through berth mcp
     * or a hook included) may land once green, without a person's confirmation.
     */
    pre_authorized: boolean;
    /**
     * true: a branch that does not contain the trunk's tip lands through an
     * integration commit; false: it is refused (`berth update` first).
     */
    queue: boolean;
  };
  logbook: { enabled: boolean };
  /** Section 13: null name = no remote; nothing touches a network then. */
  remote: { name: string | null; publish_receipts: boolean };
}
