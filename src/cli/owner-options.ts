// `--takeover` on plan and apply, and what the planner is told of the manifest's `owner:`.

import { Option } from "commander";
import type { DesiredState } from "../manifest/types.js";
import type { PlanOptions } from "../plan/compute-plan.js";

export interface OwnerFlags {
  takeover?: boolean;
}

export function takeoverOption(): Option {
  return new Option(
    "--takeover",
    "with `owner:`, let configs claim records another owner marked (they get this manifest's mark)",
  );
}

export function ownerPlanOptions(
  desired: DesiredState,
  flags: OwnerFlags,
): Pick<PlanOptions, "owner" | "takeover"> {
  return { owner: desired.owner?.name, takeover: flags.takeover === true };
}
