// `apply --plan FILE --resume`: finds the interrupted apply's journal, checks that it is of this
// plan and server, and works out what is left of the plan (resume-plan.ts).

import type { ApiClient } from "../api/index.js";
import { checkPlanServer, type RereadOptions, readStateForPlan } from "../apply/check-saved-plan.js";
import { InputError } from "../input-error.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { RefusedError } from "../refused-error.js";
import { DEFAULT_JOURNAL_DIR, fingerprintPlan } from "./apply-journal.js";
import type { Journal } from "./journal-format.js";
import { checkJournalServer, findJournalOfPlan, readJournal } from "./read-journal.js";
import { learnPluginTexts } from "./read-rollback-state.js";
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
    throw new InputError("journal_not_found", { planFile, directory: DEFAULT_JOURNAL_DIR });
  }
  checkJournalServer(journal, client.base.display);
  if (journal.header.command !== "apply" || journal.header.plan.fingerprint !== fingerprint) {
    throw new RefusedError("journal_plan_mismatch", {
      path: journal.path,
      planFile,
      why: journal.header.command === "apply" ? "another plan" : `it is a ${journal.header.command}'s`,
    });
  }
  const current = await readStateForPlan(saved, client, options);
  const replay = replayJournal(journal);
  // A write of an empty name or description shows as the plugin's own text on some servers: what
  // the run left is recognised only with those texts (a write whose answer was lost has none).
  await learnPluginTexts(client, replay, { lists: current, alone: { families: [] } }, options);
  const { reasons, remaining, done } = planResume(saved, replay, current);
  if (reasons.length > 0) throw new RefusedError("stale_plan", { file: planFile, reasons: reasons });
  return { journal, plan: remaining, current, done };
}
