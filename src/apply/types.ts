// What an apply did, change by change: the report that applyPlan makes, the check after creates
// adds to, and render/ prints. Types only, so that none of them imports another's code.

import type { FamilyName } from "../families.js";

/**
 * `unknown`: the write was sent and got no definitive answer, and could not be settled: the server
 * may or may not hold it (`pcsync plan` shows which). `skipped`: not done, by decision or because
 * the run was interrupted before it started.
 */
export type OutcomeStatus = "done" | "failed" | "skipped" | "unknown";

export interface ApplyOutcome {
  action: "create" | "update" | "delete" | "reorder";
  project: string;
  family: FamilyName;
  name: string | null;
  id: number | null;
  source: string;
  status: OutcomeStatus;
  /** Why it failed or was skipped; for a reorder, how it was done. */
  message?: string;
  /** For a reorder: how many records it moves. */
  moves?: number;
  /** A create done whose duplicate records (a lost answer's late commit, a concurrent run's) were deleted: their ids. */
  copiesRemoved?: number[];
  /** A create done, but the check for a copy of it after the family's creates could not run. */
  unchecked?: boolean;
  /** Unchecked because the run was interrupted first: reported as a count, not one line each. */
  checkInterrupted?: true;
  /** Skipped because the run was interrupted before it started. */
  notStarted?: boolean;
  /** A claim (adopt, takeover) another owner won: that owner (null: the record carries no mark now). */
  ownerLost?: { winner: string | null };
}

export interface ApplyReport {
  outcomes: ApplyOutcome[];
  done: number;
  failed: number;
  skipped: number;
  unknown: number;
  /** Creates done whose check for copies could not run (see `ApplyOutcome.unchecked`). */
  unchecked: number;
  /** The signal aborted during the run: changes not started then are skipped. */
  interrupted: boolean;
  /**
   * An update or delete of the run went unanswered and was sent again: until then the service may
   * still apply the first, over whatever was written since (a rollback, a hand edit).
   */
  mayLandUntil?: Date | undefined;
  /** The service throttled the key beyond the client's longest wait: writes left were not sent. */
  throttledUntil?: Date | undefined;
}
