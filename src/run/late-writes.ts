// Until when a journaled run's write may still land: an update or delete resent after no answer (its
// end line), or a write in flight when the run was killed. A rollback reads what to undo only after
// then (lest such a write undo it); a resume reads what is left only then (lest it create twice).

import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { realSleep, sleepUnlessAborted } from "../abortable-sleep.js";
import type { ApiClient } from "../api/index.js";
import { type EarlierCreate, isRecordOfCreate } from "../apply/dedupe-creates.js";
import { CREATE_POSTS, minimumSettleTimeoutMs, settleWindowMs } from "../apply/proof-window.js";
import { RunError } from "../apply/run-error.js";
import { formatSeconds } from "../duration.js";
import { regularFilesIn } from "../files/regular-files.js";
import {
  DEFAULT_JOURNAL_DIR,
  type IntentEntry,
  type Journal,
  readJournal,
} from "../journal/journal-format.js";
import { JournalLock } from "../journal/journal-lock.js";
import { createsSentBy } from "../journal/replay-journal.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { plural } from "../plural.js";

export interface LateWrites {
  until: Date;
  /** Why, as a clause: "the run was killed with 1 write in flight (...), and the service may ...". */
  why: string;
}

/**
 * The longest a run goes on sending one write after announcing it: every retry with its longest
 * backoff, plus a create's settle time. A killed run sent nothing longer than this after its last line.
 */
function longestSendMs(client: ApiClient): number {
  const { retries, maxDelayMs } = client.retryOptions;
  const { requestTimeoutMs, timeScale } = client;
  return (
    (retries + 1) * (requestTimeoutMs + maxDelayMs) +
    minimumSettleTimeoutMs(requestTimeoutMs, CREATE_POSTS, timeScale)
  );
}

/** The one kind of write whose landing the state can show for good. */
export function isCreate(intent: IntentEntry): boolean {
  return intent.op === "create" || intent.op === "copy";
}

/**
 * Whether `state` shows the record the create makes (isRecordOfCreate). Then no POST of it is left in
 * flight: the create rule resends only once a POST is shown not to have made it. An update or delete
 * shown done proves nothing: an earlier, unanswered attempt may still land after the one shown.
 */
export function createShown(intent: IntentEntry, state: CurrentState): boolean {
  return (
    isCreate(intent) &&
    intent.name !== null &&
    intent.name !== "" &&
    state.families.some(
      (list) =>
        list.project === intent.project &&
        list.family === intent.family &&
        list.records.some((record) =>
          isRecordOfCreate({ name: intent.name, plugin: intent.send.plugin }, record),
        ),
    )
  );
}

function describeWrite(intent: IntentEntry): string {
  const what =
    intent.op === "rearrange"
      ? "rearrange"
      : intent.name !== null
        ? `${intent.op} "${intent.name}"`
        : `${intent.op} of record ${intent.id ?? "?"}`;
  return `${what} in project ${intent.project} ${intent.family}`;
}

/** A write may commit up to a proof window after the client would give up on it; undefined when past. */
export function lateWritesOf(
  journal: Journal,
  client: ApiClient,
  options: {
    which?: (intent: IntentEntry) => boolean;
    /** Whether the end line's time (updates and deletes sent again) counts. */
    endLine?: boolean;
    now?: number;
  } = {},
): LateWrites | undefined {
  const { which = () => true, endLine = true, now = Date.now() } = options;
  const found: { until: number; why: string }[] = [];
  const ended = endLine ? journal.mayLandUntil?.getTime() : undefined;
  if (ended !== undefined && ended > now)
    found.push({
      until: ended,
      why: "an update or delete of the run went unanswered and was sent again",
    });
  const bySeq = new Map(journal.intents.map((intent) => [intent.seq, intent]));
  const unanswered = journal.unanswered.flatMap(({ seq, goneBy }) => {
    const intent = bySeq.get(seq);
    return intent !== undefined && which(intent) ? [{ intent, goneBy }] : [];
  });
  if (unanswered.length > 0) {
    const { requestTimeoutMs, timeScale } = client;
    const lastLine = journal.modifiedAt?.getTime() ?? now;
    // The run was gone by the line that followed, or by now; and sent nothing long after its last line.
    const lastSend = (goneBy: Date | undefined) =>
      goneBy?.getTime() ?? Math.min(now, lastLine + longestSendMs(client));
    const window = requestTimeoutMs + settleWindowMs(requestTimeoutMs, timeScale);
    const until = unanswered.reduce(
      (latest, { goneBy }) => Math.max(latest, lastSend(goneBy) + window),
      Number.NEGATIVE_INFINITY,
    );
    const first = unanswered[0];
    if (until > now && first !== undefined)
      found.push({
        until,
        // A write is journaled before it waits for a free connection: some of them may never have
        // been sent, which the journal cannot tell, so each is waited for as if it had been.
        why: `the run that wrote the journal was stopped with ${plural(unanswered.length, "write")} begun and not answered (${describeWrite(first.intent)}${unanswered.length > 1 ? ", ..." : ""})`,
      });
  }
  if (found.length === 0) return undefined;
  const until = found.reduce((latest, one) => Math.max(latest, one.until), Number.NEGATIVE_INFINITY);
  const them =
    found.length > 1 || unanswered.length > 1 ? "them" : unanswered.length === 0 ? "the first" : "it";
  return {
    until: new Date(until),
    why: `${found.map((one) => one.why).join("; and ")}, and the service may still apply ${them} until ${new Date(until).toISOString()}`,
  };
}

/**
 * Waits until `late.until` before the caller reads the state, saying so (a dry run only says so);
 * Ctrl-C cancels with nothing changed. Returns whether the caller is to read the state again.
 */
export async function waitForLateWrites(
  late: LateWrites | undefined,
  options: {
    what: "Apply" | "Rollback";
    /** E.g. "what to roll back". */
    reading: string;
    dryRun: boolean;
    onNote: (line: string) => void;
    signal: AbortSignal | undefined;
  },
): Promise<boolean> {
  if (late === undefined) return false;
  const left = late.until.getTime() - Date.now();
  if (left <= 0) return !options.dryRun;
  if (options.dryRun) {
    options.onNote(`note: ${late.why}: what this shows may change until then`);
    return false;
  }
  options.onNote(`note: ${late.why}: waiting ${formatSeconds(left)} before reading ${options.reading}`);
  try {
    await sleepUnlessAborted(realSleep, left, options.signal);
  } catch (error) {
    if (options.signal?.aborted) throw new RunError("apply_cancelled", { what: options.what });
    throw error;
  }
  return true;
}

/** The plan's creates a run killed here sent unanswered that may still land: resent, they'd be made twice. */
export async function killedRunsCreates(
  client: ApiClient,
  cwd: string,
  plan: Pick<Plan, "changes">,
  options: {
    /** Besides the default one: `--journal PATH`'s. */
    directories?: readonly string[];
    now?: number;
  } = {},
): Promise<LateWrites | undefined> {
  const { now = Date.now() } = options;
  const creates = new Set(
    plan.changes.flatMap((change) =>
      change.action === "create" ? [createKey(change.project, change.family, change.name)] : [],
    ),
  );
  if (creates.size === 0) return undefined;
  let found: LateWrites | undefined;
  for (const journal of await recentKilledRuns(client, cwd, options.directories ?? [], now)) {
    // Only creates this plan makes again: a late update is the rollback's concern, and an apply of the
    // same manifest writes what it would.
    const late = lateWritesOf(journal, client, {
      which: (intent) =>
        isCreate(intent) && creates.has(createKey(intent.project, intent.family, intent.name)),
      endLine: false,
      now,
    });
    if (late !== undefined && (found === undefined || late.until > found.until))
      found = { until: late.until, why: `${journal.path}: ${late.why}` };
  }
  return found;
}

/**
 * Journals of this server written recently enough that a write may still land, held by no other live
 * run (a live run settles its own; beside it, the dedupe decides). Those this process holds are a
 * rollout's earlier waves.
 */
async function recentKilledRuns(
  client: ApiClient,
  cwd: string,
  directories: readonly string[],
  now: number,
): Promise<Journal[]> {
  const { requestTimeoutMs, timeScale } = client;
  const horizon =
    now - longestSendMs(client) - requestTimeoutMs - settleWindowMs(requestTimeoutMs, timeScale);
  const journals: Journal[] = [];
  for (const directory of new Set([DEFAULT_JOURNAL_DIR, ...directories])) {
    for (const name of await regularFilesIn(resolve(cwd, directory), ".jsonl")) {
      const path = join(directory, name);
      const modified = await stat(resolve(cwd, path)).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      if (modified < horizon) continue;
      if (await JournalLock.heldElsewhere(path, { cwd })) continue;
      const journal = await readJournal(path, cwd).catch(() => undefined);
      if (journal !== undefined && journal.header.server === client.base.display) journals.push(journal);
    }
  }
  return journals;
}

/** For ApplyOptions.earlierCreates. */
export async function createsOfKilledRuns(
  client: ApiClient,
  cwd: string,
  directories: readonly string[],
): Promise<EarlierCreate[]> {
  return (await recentKilledRuns(client, cwd, directories, Date.now())).flatMap(createsSentBy);
}

/** waitForLateWrites for killedRunsCreates: whether it waited, so that the caller plans again. */
export async function waitForKilledRunsCreates(
  client: ApiClient,
  cwd: string,
  plan: Pick<Plan, "changes">,
  options: Omit<Parameters<typeof waitForLateWrites>[1], "signal"> & { directories?: readonly string[] },
): Promise<boolean> {
  const { directories = [], ...wait } = options;
  const late = await killedRunsCreates(client, cwd, plan, { directories });
  return await waitForLateWrites(late, { ...wait, signal: client.signal });
}

function createKey(project: string, family: string, name: string | null): string {
  return JSON.stringify([project, family, name]);
}
