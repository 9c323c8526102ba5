// A write that adopts a record (no mark) or takes it over (another owner's mark) races another
// owner claiming it at once, and the service has no conditional write: the last write wins. So a
// claim reads the record just before it writes (another owner's mark there now: not sent), and
// again after a window in which a rival's write would land (not its own mark: lost, naming the
// winner). Of two owners claiming one record at once, the one whose write the record shows wins.

import { type ApiClient, getConfig, type PluginConfigRecord } from "../api/index.js";
import { describeError } from "../errors.js";
import { readMark } from "../owner-mark.js";
import type { PlannedChange } from "../plan/types.js";
import { outcomeOf } from "./outcomes.js";
import type { ApplyOutcome } from "./types.js";

/** At least this long between a claim's write and its check: a rival's write sent at once lands. */
export const CLAIM_WINDOW_MS = 1000;

/** Whether the change hands the record to its owner (adopted, or taken over with --takeover). */
export function isClaim(change: PlannedChange): boolean {
  return change.mark?.from !== undefined;
}

function lost(change: PlannedChange, winner: string | null, written: boolean): ApplyOutcome {
  const what = written
    ? winner === null
      ? "its mark was replaced by another write to the description at the same time (the record carries no owner mark now)"
      : `owner "${winner}" claimed it at the same time, and its mark won (its write came last)`
    : `owner "${winner}" claimed it since the plan was made; it was not written`;
  return { ...outcomeOf(change, "failed", what), ownerLost: { winner } };
}

/**
 * Before the write: the record's owner now. A claim of a record another owner holds since the
 * plan is lost before it is sent (undefined: go on and write).
 */
export async function checkBeforeClaim(
  client: ApiClient,
  change: PlannedChange,
): Promise<ApplyOutcome | undefined> {
  if (change.id === null || change.mark === undefined) return undefined;
  let record: PluginConfigRecord;
  try {
    record = await getConfig(client, change.project, change.family, change.id);
  } catch (error) {
    return outcomeOf(
      change,
      "failed",
      `could not read the record before claiming it: ${describeError(error)}`,
    );
  }
  const owner = readMark(record.description).owner;
  if (owner === change.mark.from || owner === change.mark.owner) return undefined;
  return lost(change, owner, false);
}

/**
 * After the write: waits out the window (at least as long as the write took from the check before
 * it, so a rival as slow still lands), reads the record, and says whether this owner's mark won.
 */
export async function confirmClaim(
  client: ApiClient,
  change: PlannedChange,
  tookMs: number,
  windowMs = CLAIM_WINDOW_MS,
): Promise<ApplyOutcome> {
  if (change.id === null || change.mark === undefined) return outcomeOf(change, "done");
  await new Promise((done) => setTimeout(done, Math.max(windowMs, 2 * tookMs)));
  let record: PluginConfigRecord;
  try {
    record = await getConfig(client, change.project, change.family, change.id);
  } catch (error) {
    return outcomeOf(
      change,
      "unknown",
      `written, but the record could not be read again to confirm that this owner's mark won: ${describeError(error)}; run \`pcsync plan\` to see`,
    );
  }
  const owner = readMark(record.description).owner;
  return owner === change.mark.owner ? outcomeOf(change, "done") : lost(change, owner, true);
}
