import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Context } from "../context.js";
import { readDeskDetail } from "../core/desk/detail.js";
import { deskFolders, measuredRead, startDeskFeed } from "../core/desk/feed.js";
import { actionUnavailable, buildDeskModel } from "../core/desk/model.js";
import { readStatus } from "../core/fleet/status.js";
import { openRepository } from "../core/repo/repository.js";
import { UserError } from "../errors.js";
import { readAdminKeys } from "../io/admin-dirs.js";
import { success } from "../result.js";
import { shellCommand } from "../text.js";
import type { DeskController, DeskSession, DeskSnapshot } from "../ui/desk/types.js";
import { colorsFor } from "../ui/style.js";
import type { CommandOutcome } from "./outcome.js";

/**
 * `berth desk` (spec sections 5 and 8): the interactive view of the fleet.
 * It reads what `status --all` reads, groups it with the core desk model,
 * and runs each action through the CLI verb's own core functions
 * (desk-actions.ts). ink and react load here only, after the terminal check.
 */

interface Reading {
  snapshot: DeskSnapshot;
  adminKeys: string[];
}

export async function deskCommand(
  ctx: Context,
  options: { json?: boolean },
): Promise<CommandOutcome> {
  if (options.json || !ctx.stdinIsTTY || !ctx.stdoutIsTTY) {
    const why = options.json
      ? "berth desk is an interactive view and prints no JSON document"
      : `berth desk is an interactive view and needs a terminal on stdin and stdout (${!ctx.stdinIsTTY ? "stdin" : "stdout"} is not one)`;
    throw new UserError(
      "precondition_failed",
      `${why}; nothing changed. berth status --json prints the same survey as one document.`,
      { next: shellCommand(["berth", "status", "--json"]) },
    );
  }
  const repo = await openRepository(ctx);
  const { commonDir } = repo.location;
  const prefix = repo.config.repository.branch_prefix;
  // Accepting or dropping the berth the desk was started in removes its folder: read from the main checkout then.
  const liveCwd = () => (existsSync(ctx.cwd) ? ctx.cwd : repo.mainPath);

  const read = async (): Promise<Reading> => {
    const readCtx = { ...ctx, cwd: liveCwd() };
    const adminKeys = readAdminKeys(commonDir);
    const status = await readStatus(readCtx, { all: true });
    const data = status.data;
    if (data === null) throw new Error("the fleet survey returned no data");
    const readAt = ctx.now();
    return {
      snapshot: {
        model: buildDeskModel(data, readAt),
        mainPath: repo.mainPath,
        readAt,
        hints: status.hints,
      },
      adminKeys: [...adminKeys.values()],
    };
  };

  // The first reading's cost paces the first periodic re-read (core/desk/feed.ts).
  const first = await measuredRead(read);
  let latest = first.value;
  const listeners = new Set<(update: DeskSnapshot | Error) => void>();
  const feed = startDeskFeed<Reading>(
    {
      read,
      folders: (reading) => deskFolders(commonDir, prefix, reading.adminKeys),
      onSnapshot: (reading) => {
        latest = reading;
        for (const listener of listeners) listener(reading.snapshot);
      },
      onError: (error) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        for (const listener of listeners) listener(failure);
      },
      initialCostMs: first.costMs,
    },
    latest,
  );

  const controller: DeskController = {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    current: () => latest.snapshot,
    refresh: () => feed.refresh(),
    detail: (item) => readDeskDetail(item, latest.snapshot.model.trunk.tip, liveCwd(), commonDir),
    unavailable: actionUnavailable,
    propose: (action, item) => {
      if (action === "shell" || item.kind !== "berth") {
        return Promise.reject(
          new Error(`the desk opens a shell itself; ${action} is not a planned action`),
        );
      }
      // Loaded at the first action: the desk's refusal without a terminal needs none of the verbs.
      return import("./desk-actions.js").then(({ proposeDeskAction }) =>
        proposeDeskAction({ base: ctx, cwd: liveCwd }, action, item),
      );
    },
  };
  const session: DeskSession = {
    selectedKey: null,
    selectedIndex: 0,
    detailOpen: false,
    filter: "",
    message: null,
  };

  const { runDesk } = await import("../ui/desk/run.js");
  try {
    await runDesk({
      controller,
      session,
      color: colorsFor(ctx.stdoutIsTTY, ctx.env).isColorSupported,
      openShell: (path, id) => {
        feed.pause();
        try {
          return openShell(ctx, path, id);
        } finally {
          feed.resume();
        }
      },
    });
  } finally {
    feed.close();
  }
  return { result: success("desk", null), human: () => ({}) };
}

/**
 * `$SHELL` (or `sh`) in the berth's folder, with the terminal handed over.
 * Synchronous on purpose: while it runs, the desk's process reads nothing
 * from the terminal, so no keystroke meant for the shell is lost.
 */
function openShell(ctx: Context, path: string, id: string): string {
  const shell = ctx.env.SHELL || "sh";
  if (!existsSync(path)) return `${id}'s folder is gone; no shell opened`;
  process.stdout.write(`berth desk: ${shell} in ${path} (${id}); exit it to return to the desk\n`);
  // The terminal's Ctrl-C is the shell's business; it must not end the desk.
  const ignore = () => undefined;
  process.on("SIGINT", ignore);
  try {
    const run = spawnSync(shell, [], { cwd: path, stdio: "inherit", env: ctx.env });
    if (run.error) return `could not start ${shell}: ${run.error.message}`;
    return `back from the shell in ${path}`;
  } finally {
    process.off("SIGINT", ignore);
  }
}
