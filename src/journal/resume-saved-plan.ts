// `apply --plan FILE --resume`: finds the interrupted apply's journal, checks that it is of this
// plan and server, and works out what is left of the plan (resume-plan.ts).

import type { ApiClient } from "../api/index.js";
import {
  checkPlanServer,
  type RereadOptions,
  readStateForPlan,
  StalePlanError,
} from "../apply/check-saved-plan.js";
import { EXIT_REFUSED, PcsyncError } from "../errors.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { DEFAULT_JOURNAL_DIR, fingerprintPlan } from "./apply-journal.js";
import type { Journal } from "./journal-format.js";
import { checkJournalServer, findJournalOfPlan, readJournal } from "./read-journal.js";
import { replayJournal } from "./replay-journal.js";
import { planResume } from "./resume-plan.js";

export interface ResumedPlan {
  journal: Journal;
  plan: Plan;
  current: CurrentState;
  /** The plan's changes and moves the interrupted run had done. */
  done: number;
}

export async function resumeSavedPlan(
  saved: Plan,
  planFile: string,
  journalPath: string | undefined,
  client: ApiClient,
  options: RereadOptions & { cwd: string },
): Promise<ResumedPlan> {
  checkPlanServer(saved, planFile, client);
  const fingerprint = fingerprintPlan(saved);
  const journal =
    journalPath === undefined
      ? await findJournalOfPlan(options.cwd, fingerprint)
      : await readJournal(journalPath, options.cwd);
  if (journal === undefined) {
    throw new PcsyncError(
      "journal_not_found",
      `no journal of an apply of ${planFile} in ${DEFAULT_JOURNAL_DIR}/. Give the interrupted apply's journal with --journal PATH.`,
    );
  }
  checkJournalServer(journal, client.base.display);
  if (journal.header.command !== "apply" || journal.header.plan.fingerprint !== fingerprint) {
    throw new PcsyncError(
      "journal_plan_mismatch",
      `the journal ${journal.path} is not of an apply of ${planFile} (${journal.header.command === "apply" ? "another plan" : "it is a rollback's"}). Give the journal of the apply of this plan with --journal PATH.`,
      { exitCode: EXIT_REFUSED },
    );
  }
  const current = await readStateForPlan(saved, client, options);
  const { reasons, remaining, done } = planResume(saved, replayJournal(journal), current);
  if (reasons.length > 0) throw new StalePlanError(planFile, reasons);
  return { journal, plan: remaining, current, done };
}
