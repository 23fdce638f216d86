import { shortOid } from "../../text.js";
import type { AcceptPlan } from "./accept.js";
import { behindTrunk } from "./accept-subject.js";

/**
 * An accept plan for a stack that does not contain the trunk's tip (spec
 * section 11): instead of refusing, the landing queue merges the trunk tip
 * and the stack tip (trunk first) in a throwaway integration checkout, gates
 * that merge commit and fast-forwards the trunk to it. A receipt for the
 * stack's tip proves nothing about the merge, so the gate always runs; the
 * commit that lands is not known until the merge is made. With
 * `[acceptance].queue = false` it is refused instead (spec section 5).
 */
export function asIntegration(plan: AcceptPlan): AcceptPlan {
  const { data } = plan;
  const trunk = data.trunk;
  if (!plan.repo.config.acceptance.queue) {
    throw behindTrunk(data.branch, { name: trunk.name, tip: trunk.old }, data);
  }
  data.validated = { ...data.validated, by: "gate" };
  const checks = data.validated.checks ?? 0;
  const [, , ...rest] = plan.steps;
  return {
    ...plan,
    mode: "integrate",
    provenTree: null,
    steps: [
      {
        step: "integrate",
        target: data.validated.commit,
        detail: `merge ${trunk.name} (${shortOid(trunk.old)}) and ${data.branch} in a throwaway integration checkout`,
      },
      {
        step: "validate",
        target: "the integration commit",
        detail: `run the trunk's gate on it (${checks} check(s))`,
      },
      {
        step: "move trunk",
        target: trunk.name,
        detail: `${trunk.old} -> the integration commit (fast-forward)`,
      },
      // The main checkout follows the trunk to the merge, not to the stack's tip.
      ...rest.map((step) =>
        step.step === "update main checkout"
          ? { ...step, detail: `its files follow ${trunk.name} to the integration commit` }
          : step,
      ),
    ],
  };
}
