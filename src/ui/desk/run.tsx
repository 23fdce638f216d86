import { render } from "ink";
import { Desk } from "./app.js";
import type { DeskController, DeskExit, DeskSession } from "./types.js";

/**
 * Mounts the desk on the terminal's alternate screen until it quits. To open
 * a shell it unmounts (the terminal is back in its normal mode), lets the
 * caller run the shell, and mounts again with the same session, so the
 * selection survives.
 */

export interface RunDeskOptions {
  controller: DeskController;
  session: DeskSession;
  /** Runs a shell in `path` with the terminal handed over; returns the line to show after. */
  openShell(path: string, id: string): string;
  /** Color the screen (false with NO_COLOR, TERM=dumb). */
  color: boolean;
}

const ENTER_ALTERNATE_SCREEN = "\u001b[?1049h\u001b[2J\u001b[H";
const LEAVE_ALTERNATE_SCREEN = "\u001b[?1049l";

export async function runDesk(options: RunDeskOptions): Promise<void> {
  const out = process.stdout;
  out.write(ENTER_ALTERNATE_SCREEN);
  try {
    for (;;) {
      const instance = render(
        <Desk controller={options.controller} session={options.session} color={options.color} />,
        {
          exitOnCtrlC: false,
          patchConsole: false,
        },
      );
      const ended = (await instance.waitUntilExit()) as DeskExit | undefined;
      if (ended?.kind !== "shell") return;
      out.write(LEAVE_ALTERNATE_SCREEN);
      options.session.message = options.openShell(ended.path, ended.id);
      out.write(ENTER_ALTERNATE_SCREEN);
    }
  } finally {
    out.write(LEAVE_ALTERNATE_SCREEN);
  }
}
