// What apply sends and checks for a change with an owner mark: the service stores the user's text with
// the mark at its end (owner-mark.ts); the plan only ever holds the text.

import type { PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import type { WritableField } from "../families.js";
import { readMark, writeMark } from "../owner-mark.js";
import { showsStored, showsWritten } from "../plan/compare-fields.js";
import type { PlannedChange } from "../plan/types.js";

/** The text under the mark a change writes: the description it sets, else the one it keeps. */
function markedText(change: PlannedChange): string | null {
  const set = change.fields.description;
  if (set !== undefined) return typeof set.to === "string" ? set.to : null;
  return change.mark?.keep ?? null;
}

export function markedBody(change: PlannedChange, body: PluginConfigInput): PluginConfigInput {
  if (change.mark === undefined) return body;
  return { ...body, description: writeMark(markedText(change), change.mark.owner) };
}

export function markDescription(change: PlannedChange, text: string | null): string | null {
  return change.mark === undefined ? text : writeMark(text, change.mark.owner);
}

export function markProblem(change: PlannedChange, record: PluginConfigRecord): string | undefined {
  if (change.mark === undefined) return undefined;
  const read = readMark(record.description);
  if (read.owner === change.mark.owner && read.text === markedText(change)) return undefined;
  return `the server accepted the write but its description does not carry the owner mark of "${change.mark.owner}" over the text written (it reads ${read.owner === null ? "no mark" : `owner "${read.owner}"`}); run \`pcsync plan\` to see the record`;
}

/** Whether another run's record may be a copy of this create: another owner's is theirs to keep. */
export function sameOwner(change: PlannedChange, record: PluginConfigRecord): boolean {
  return change.mark === undefined || readMark(record.description).owner === change.mark.owner;
}

/**
 * A description under a mark is the user's text (markProblem checks the mark); one without is compared
 * as stored: a rollback puts back a description with its old mark, or takes a mark away.
 */
export function showsChange(
  change: PlannedChange,
  field: WritableField,
  record: PluginConfigRecord,
): boolean {
  const to = change.fields[field]?.to;
  if (to === undefined) return true;
  return change.mark === undefined ? showsStored(field, to, record) : showsWritten(field, to, record);
}

export function mismatchedFields(change: PlannedChange, record: PluginConfigRecord): WritableField[] {
  return (Object.keys(change.fields) as WritableField[]).filter(
    (field) => !showsChange(change, field, record),
  );
}
