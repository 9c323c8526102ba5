// The journaled apply of `apply`, `rollback` and heal: the lock taken before the journal's first line,
// the plan applied with every write announced, the journal ended and unlocked even when the apply throws.

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
  /** Undefined without a journal. */
  journal: string | undefined;
  report: ApplyReport;
}

export interface JournaledApplyOptions {
  /** A path; undefined: a new one under the default directory; false: no journal (--no-journal). */
  journalPath: string | false | undefined;
  /** Appended to, not started. */
  resumed?: Journal | undefined;
  /** Taken already by the caller (a resume's; a rollout's wave's, held until it ends); else taken here. */
  lock?: JournalLock | undefined;
  start: Omit<JournalStart, "server" | "plan">;
  files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry };
  /** A rollback's records no list shows, which the journal must know as they are. */
  alsoKnown?: CurrentState | undefined;
  apply: Omit<ApplyOptions, "journal">;
  onNote?: ((line: string) => void) | undefined;
  onJournal?: ((path: string) => void) | undefined;
  /** The CLI's interrupts stop writes from then on. */
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
  // The journal's path is checked before its lock is made beside it (or before its first line).
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

/** ApplyOptions.earlierCreates, where a create's record may be kept in another family's list. */
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
