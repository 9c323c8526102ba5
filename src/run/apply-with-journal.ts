// The one journaled apply that `apply`, `rollback` and watch's heal share: the journal's lock
// taken before its first line, the journal started (or resumed), the plan applied with every write
// announced to it, the journal ended and its lock released, also when the apply throws.

import { dirname } from "node:path";
import type { ApiClient } from "../api/index.js";
import { type ApplyOptions, applyPlan } from "../apply/apply-plan.js";
import type { EarlierCreate } from "../apply/dedupe-creates.js";
import type { ApplyReport } from "../apply/types.js";
import { familiesListing } from "../family-lists.js";
import type { RunInput } from "../files/output-target.js";
import {
  ApplyJournal,
  defaultJournalPath,
  type JournalStart,
  makeDefaultDirectory,
} from "../journal/apply-journal.js";
import { JournalFile } from "../journal/journal-file.js";
import type { Journal } from "../journal/journal-format.js";
import { JournalLock } from "../journal/journal-lock.js";
import { createsSentBy } from "../journal/replay-journal.js";
import type { CurrentState, Plan } from "../plan/types.js";
import type { SecretRegistry } from "../redact.js";
import { createsOfKilledRuns } from "./late-writes.js";

export interface JournaledApply {
  /** The journal's path (as given, or the default one); undefined without a journal. */
  journal: string | undefined;
  /** Throws what applyPlan threw, once the journal is closed and its lock released. */
  report: ApplyReport;
}

export interface JournaledApplyOptions {
  /** A path; undefined: a new one under the default directory; false: no journal (--no-journal). */
  journalPath: string | false | undefined;
  /** The journal of the interrupted run this one finishes (appended to, not started). */
  resumed?: Journal | undefined;
  /**
   * The lock the caller took already on the journal's path (a resume's; a rollout's wave, held
   * until the rollout ends); else it is taken here, and released when the apply ends.
   */
  lock?: JournalLock | undefined;
  start: Omit<JournalStart, "server" | "plan">;
  files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry };
  /** Records the lists do not show that the journal must know as they are (a rollback's). */
  alsoKnown?: CurrentState | undefined;
  apply: Omit<ApplyOptions, "journal">;
  /** Said once the journal's lock is taken: a stale lock taken over is worth a note. */
  onNote?: ((line: string) => void) | undefined;
  /** Called once the journal is started or resumed, with its path. */
  onJournal?: ((path: string) => void) | undefined;
  /** Called just before the first write (the CLI's interrupts stop writes from then on). */
  beforeWrites?: (() => void) | undefined;
}

export async function applyWithJournal(
  client: ApiClient,
  plan: Plan,
  state: CurrentState,
  options: JournaledApplyOptions,
): Promise<JournaledApply> {
  const { files } = options;
  const known = options.alsoKnown ? { families: [...state.families, ...options.alsoKnown.families] } : state;
  const given = options.journalPath;
  const journalPath =
    options.resumed?.path ?? (given === false ? undefined : (given ?? defaultJournalPath(new Date())));
  // Read before this run's journal takes the path a killed run's journal may have (and its lock).
  const earlierCreates = await earlierCreatesBefore(client, plan, options, journalPath);
  let ownLock: JournalLock | undefined;
  // What the journal's path is, checked before its lock is made beside it (or, taken by the
  // caller already, before the journal's first line).
  if (journalPath !== undefined && (options.lock === undefined || !options.resumed)) {
    await makeDefaultDirectory(journalPath, files.cwd);
    if (!options.resumed) await JournalFile.checkTarget(journalPath, { ...files, fresh: true });
  }
  if (journalPath !== undefined && options.lock === undefined) {
    ownLock = await JournalLock.acquire(journalPath, { cwd: files.cwd, command: options.start.command });
    if (ownLock.takeOverNote !== undefined) options.onNote?.(ownLock.takeOverNote);
  }
  try {
    let journal: ApplyJournal | undefined;
    if (options.resumed) journal = await ApplyJournal.resume(options.resumed, files, known);
    else if (journalPath !== undefined)
      journal = await ApplyJournal.start(
        journalPath,
        files,
        { ...options.start, server: client.base.display, plan },
        known,
      );
    if (journal !== undefined) options.onJournal?.(journal.path);
    options.beforeWrites?.();
    let report: ApplyReport | undefined;
    try {
      const createdBefore =
        options.resumed && createsSentBy(options.resumed).flatMap((create) => create.id ?? []);
      report = await applyPlan(client, plan, state, {
        ...options.apply,
        journal,
        createdBefore,
        earlierCreates,
      });
    } finally {
      await journal?.finish(report);
    }
    return { journal: journal?.path, report };
  } finally {
    await ownLock?.release();
  }
}

/**
 * The creates that the run this one resumes, or runs killed here lately, sent, where the plan
 * creates in a family whose records another family's list may show (the records of those creates
 * can be kept there: apply-plan.ts, ApplyOptions.earlierCreates).
 */
async function earlierCreatesBefore(
  client: ApiClient,
  plan: Plan,
  options: JournaledApplyOptions,
  journalPath: string | undefined,
): Promise<EarlierCreate[]> {
  const mayBeElsewhere = plan.changes.some(
    (change) => change.action === "create" && familiesListing(change.family).length > 0,
  );
  if (!mayBeElsewhere) return [];
  if (options.resumed) return createsSentBy(options.resumed);
  const directories = journalPath === undefined ? [] : [dirname(journalPath)];
  return await createsOfKilledRuns(client, options.files.cwd, directories);
}
