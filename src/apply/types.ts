// What an apply did, change by change: made by applyPlan, revised by the check after creates, printed
// by render/. Types only, so that none of them imports another's code.

import type { FamilyName } from "../families.js";

/** `unknown`: sent, no definitive answer, not settled. `skipped`: by decision, or interrupted before it. */
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
  /** Duplicates of a create (a lost answer's late commit, a concurrent run's) deleted. */
  copiesRemoved?: number[];
  /** A create done whose check for copies could not run. */
  unchecked?: boolean;
  /** Interrupted first: reported as a count, not one line each. */
  checkInterrupted?: true;
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
  unchecked: number;
  interrupted: boolean;
  /**
   * An update or delete of the run went unanswered and was sent again: until then the service may
   * still apply the first, over whatever was written since (a rollback, a hand edit).
   */
  mayLandUntil?: Date | undefined;
  /** The service throttled the key beyond the client's longest wait: writes left were not sent. */
  throttledUntil?: Date | undefined;
}
