/**
 * The world a verb runs in. Core code takes this instead of reaching for
 * process globals, so tests run verbs in-process with a fixed clock.
 */
export interface Context {
  cwd: string;
  env: NodeJS.ProcessEnv;
  now: () => Date;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** stdout is a terminal: human output may use color and tables. */
  stdoutIsTTY: boolean;
  /** stderr is a terminal: progress may be drawn there. */
  stderrIsTTY: boolean;
  /** stdin is a terminal: a [y/N] question can be answered. */
  stdinIsTTY: boolean;
  debug: boolean;
}

export function processContext(debug: boolean): Context {
  return {
    cwd: process.cwd(),
    env: process.env,
    now: () => new Date(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true,
    debug,
  };
}
