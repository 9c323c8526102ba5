// The outcome of one planned change as apply reports it: done, failed, unknown (sent, no definitive
// answer) or skipped (not started because the run was interrupted).

import { isRequestError } from "../api/index.js";
import { describeError } from "../errors.js";
import type { PlannedChange } from "../plan/types.js";
import type { ApplyOutcome, OutcomeStatus } from "./types.js";

export const NOT_STARTED = "not started: the run was interrupted";

export const REORDER_NOT_STARTED = { status: "skipped", message: NOT_STARTED, notStarted: true } as const;

export function notStartedOutcome(change: PlannedChange, detail?: string): ApplyOutcome {
  return {
    ...outcomeOf(change, "skipped", detail === undefined ? NOT_STARTED : `${NOT_STARTED} (${detail})`),
    notStarted: true,
  };
}

export function outcomeOf(change: PlannedChange, status: OutcomeStatus, message?: string): ApplyOutcome {
  return {
    action: change.action,
    project: change.project,
    family: change.family,
    name: change.name,
    id: change.id,
    source: change.source,
    status,
    ...(message === undefined ? {} : { message }),
  };
}

export function outcomeOfError(change: PlannedChange, error: unknown): ApplyOutcome {
  if (isRequestError(error) && error.outcomeUnknown) {
    return outcomeOf(
      change,
      "unknown",
      `${error.message}; it may or may not have been applied: run \`pcsync plan\` to see`,
    );
  }
  if (isRequestError(error, "request_aborted")) return notStartedOutcome(change);
  return outcomeOf(change, "failed", describeError(error));
}
