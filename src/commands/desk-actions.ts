import type { Context } from "../context.js";
import { type DeskAction, type DeskBerthItem, isWaiting } from "../core/desk/model.js";
import { planAccept } from "../core/landing/accept.js";
import { finishLanding, submitAndLand } from "../core/landing/accept-queued.js";
import { runGate } from "../core/landing/gate.js";
import { runUpdate } from "../core/landing/update.js";
import { applyDrop, planDrop } from "../core/lifecycle/drop.js";
import { applyPark, planPark } from "../core/lifecycle/park.js";
import { asApplied } from "../result.js";
import type { ActionProposal } from "../ui/desk/types.js";
import { gateProgress } from "../ui/gate-view.js";
import { acceptConfirmation, acceptOutcome } from "./accept.js";
import { type DeskActionEnvironment, type DeskVerb, runDeskAction } from "./desk-run.js";
import { gateConfirmation, gateOutcome } from "./gate.js";
import { applyUntil } from "./interrupt.js";
import type { CommandOutcome } from "./outcome.js";
import { queueApproveCommand, queueConfirmation, queueWithdrawCommand } from "./queue.js";
import { updateConfirmation, updateOutcome } from "./update.js";
import { dropConfirmation, dropOutcome } from "./worktree-drop.js";
import { parkConfirmation, parkOutcome } from "./worktree-park.js";
import { applyReclaim, planReclaim, reclaimConfirmation } from "./worktree-reclaim.js";

/**
 * The desk's per-berth actions (spec section 8), declared: each is its CLI
 * verb, planned with the same core function, confirmed with that verb's own
 * confirmation, applied with the same core function and rendered with the
 * verb's own view, run as one invocation of the verb (desk-run.ts). The
 * desk's Ctrl-C on a running action stops it as the terminal's would stop
 * the verb: the signal each apply is given.
 */

export type { DeskActionEnvironment } from "./desk-run.js";

/**
 * `berth queue approve|withdraw <id>`: one line naming the command, asked of
 * the waiting entry or, with none, of the standing grant (decision 0078).
 */
function queueAction(
  verb: "approve" | "withdraw",
  run: (ctx: Context, id: string) => Promise<CommandOutcome>,
  question: { entry: (id: string) => string; grant: (id: string) => string },
): DeskVerb {
  return {
    verb: `queue ${verb}`,
    inBerth: false,
    async plan(ctx, item) {
      const id = item.row.id;
      const asked = isWaiting(item.row.queue?.state) ? question.entry(id) : question.grant(id);
      return {
        confirmation: queueConfirmation(asked, ["berth", "queue", verb, id]),
        note: null,
        apply: () => run(ctx, id),
      };
    },
  };
}

const DESK_VERBS: Record<Exclude<DeskAction, "shell">, DeskVerb> = {
  gate: {
    verb: "gate",
    inBerth: true,
    async plan(ctx, _item, c) {
      const dry = await runGate(ctx, { dryRun: true });
      return {
        confirmation: gateConfirmation(dry, c),
        note: null,
        apply: async (signal, progress) =>
          gateOutcome(await runGate(ctx, { signal, onEvent: gateProgress(progress, c) })),
      };
    },
  },

  update: {
    verb: "update",
    inBerth: true,
    async plan(ctx, _item, c) {
      const dry = await runUpdate(ctx, { dryRun: true });
      return {
        confirmation: updateConfirmation(dry, c),
        note: null,
        apply: async (signal) =>
          updateOutcome(
            await applyUntil(signal, ctx, (ctx) =>
              runUpdate(ctx, { confirmed: dry.data ?? undefined }),
            ),
          ),
      };
    },
  },

  /** Confirmed in the desk: the entry has a person's authority, and the desk waits for it. */
  accept: {
    verb: "accept",
    inBerth: false,
    async plan(ctx, item, c) {
      const plan = await planAccept(ctx, { target: item.row.path });
      return {
        confirmation: acceptConfirmation(plan, c),
        note: null,
        apply: async (signal, progress) => {
          const options = { signal, onEvent: gateProgress(progress, c) };
          return acceptOutcome(
            asApplied(
              plan.mode === "finish"
                ? await finishLanding(ctx, plan, options)
                : await submitAndLand(ctx, plan, true, options),
            ),
          );
        },
      };
    },
  },

  /** The desk's approve key: the waiting entry may land (the next lander lands it), or a grant. */
  approve: queueAction("approve", queueApproveCommand, {
    entry: (id) => `Approve ${id} to land once it is green?`,
    grant: (id) => `Let ${id} land once it is submitted and green (a standing grant)?`,
  }),

  withdraw: queueAction("withdraw", queueWithdrawCommand, {
    entry: (id) => `Withdraw ${id} from the landing queue (the berth is untouched)?`,
    grant: (id) => `Take back ${id}'s standing grant (its next submission waits for approval)?`,
  }),

  /** One contained berth: exactly `berth worktree reclaim <id>`. */
  reclaim: {
    verb: "worktree reclaim",
    inBerth: false,
    async plan(ctx, item, c) {
      const reclaim = await planReclaim(ctx, item.row.path, item.row.id);
      return {
        confirmation: reclaimConfirmation(reclaim, c),
        note: null,
        apply: (signal) => applyReclaim(ctx, reclaim, signal),
      };
    },
  },

  park: {
    verb: "worktree park",
    inBerth: false,
    async plan(ctx, item, c) {
      const plan = await planPark(ctx, { target: item.row.path });
      return {
        confirmation: parkConfirmation(plan, c),
        note: null,
        apply: async (signal) =>
          parkOutcome(await applyUntil(signal, ctx, (ctx) => applyPark(ctx, plan))),
      };
    },
  },

  /** Planned as `--force` would plan it; the command and the note say `--force` only when work would be lost. */
  drop: {
    verb: "worktree drop",
    inBerth: false,
    async plan(ctx, item, c) {
      const plan = await planDrop(ctx, { target: item.row.path, force: true });
      return {
        confirmation: dropConfirmation(plan, c),
        note: plan.data.forced
          ? "this drop discards work (listed below), so the CLI needs --force; a recovery ref keeps its commits"
          : null,
        apply: async (signal) =>
          dropOutcome(asApplied(await applyUntil(signal, ctx, (ctx) => applyDrop(ctx, plan)))),
      };
    },
  },
};

export function proposeDeskAction(
  env: DeskActionEnvironment,
  action: Exclude<DeskAction, "shell">,
  item: DeskBerthItem,
): Promise<ActionProposal> {
  return runDeskAction(env, action, DESK_VERBS[action], item);
}
