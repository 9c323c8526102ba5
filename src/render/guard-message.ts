// A safety guard in the words pcsync shows: what the planner found (the plan keeps the numbers),
// then the flags that override it, unless this run already overrides it (--force).

import { isForceable } from "../plan/safety-guards.js";
import type { GuardRule, GuardViolation } from "../plan/types.js";

const OVERRIDES = {
  prune_to_empty: "Use --force if that is really intended.",
  max_delete_percent: "Raise --max-delete-percent or use --force if that is intended.",
  max_update_percent: "Raise --max-update-percent or use --force if that is intended.",
  protected:
    "Pass --allow-destroy NAME for each record to delete, if that is intended (--force does not lift protection).",
} as const satisfies Record<GuardRule, string>;

/** With `forced`, a guard --force overrides is said without the advice to use the flag just given. */
export function describeGuard(guard: GuardViolation, options: { forced?: boolean } = {}): string {
  const found = describeFinding(guard);
  return options.forced === true && isForceable(guard.rule) ? found : `${found} ${OVERRIDES[guard.rule]}`;
}

function describeFinding(finding: GuardViolation): string {
  if (finding.rule === "max_update_percent") {
    const share = Math.round((finding.updates * 100) / finding.owned);
    return `project ${finding.project} ${finding.family}: the plan would update ${finding.updates} of ${finding.owned} records (${share}%, more than ${finding.limitPercent}%) (${finding.source}).`;
  }
  if (finding.rule === "protected") {
    const records = finding.records
      .map(
        ({ id, name, protectedBy }) =>
          `${name === null ? "no name" : `"${name}"`} (id ${id}, protected by ${protectedBy.pattern === name ? "" : `"${protectedBy.pattern}" at `}${protectedBy.source})`,
      )
      .join(", ");
    return `project ${finding.project} ${finding.family}: the plan would delete protected ${finding.records.length === 1 ? "record" : "records"} ${records}.`;
  }
  // With an owner, the share is of its own records: the others' stay whatever prune does.
  const records = finding.owner === undefined ? "records" : `records of owner "${finding.owner}"`;
  const emptied = finding.owner === undefined ? "the family" : "the owner's part of the family";
  const what =
    finding.rule === "prune_to_empty"
      ? `${finding.owned === 1 ? `the only ${records.replace("records", "record")}` : `all ${finding.owned} ${records}`} and leave ${emptied} empty`
      : `${finding.deletes} of ${finding.owned} ${records} (${Math.round((finding.deletes * 100) / finding.owned)}%, more than ${finding.limitPercent}%)`;
  return `project ${finding.project} ${finding.family}: prune would delete ${what} (${finding.source}).`;
}
