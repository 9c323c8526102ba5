// The webhook events of `pcsync watch`, sent on a change of state only: drift_opened once while a
// family drifts, drift_changed when the drifted records change, drift_resolved when back in sync.

import { appendAll } from "../append-all.js";
import { type FamilyRef, familyKey } from "../families.js";
import { type EventName, MAX_EVENT_CHANGES, type PcsyncEvent } from "../notify/event.js";
import { summarizePlan } from "../plan/plan-file.js";
import type { PlannedChange, PlannedReorder } from "../plan/types.js";
import type { FamilyFinding } from "./cycle-log.js";
import { describeBackoff, FLAP_CYCLES } from "./heal-flapping.js";

// By record and action only: further edits of a record already drifting are the same drift.
function driftSignature(changes: readonly PlannedChange[], reorder: PlannedReorder | undefined): string {
  const records = changes.map((change) =>
    change.id === null ? `${change.action}:new:${change.name}` : `${change.action}:${change.id}`,
  );
  for (const move of reorder?.moves ?? []) records.push(`move:${move.id}`);
  return records.sort().join("\n");
}

function familyEvent(
  event: EventName,
  { project, family }: Pick<FamilyFinding, "project" | "family">,
  changes: readonly PlannedChange[],
  reorder: PlannedReorder | undefined,
  at: string,
  message?: string,
): PcsyncEvent {
  return {
    event,
    project,
    family,
    summary: summarizePlan(changes, reorder === undefined ? [] : [reorder]),
    changes: changes.slice(0, MAX_EVENT_CHANGES),
    at,
    ...(message === undefined ? {} : { message }),
  };
}

function cycleEvent(event: EventName, message: string, at: string): PcsyncEvent {
  return { event, project: null, family: null, summary: summarizePlan([], []), changes: [], at, message };
}

export class EventTracker {
  readonly #drift = new Map<string, FamilyRef & { signature: string }>();
  readonly #refused = new Map<string, string>();
  #failure: string | undefined;
  #invalid: string | undefined;

  /** `failure`: some of its heal failed, a cycle_failed once per stretch of such cycles. */
  observeCycle(findings: readonly FamilyFinding[], at: string, failure?: string): PcsyncEvent[] {
    this.#invalid = undefined;
    const events: PcsyncEvent[] = [];
    const seen = new Set<string>();
    for (const finding of findings) {
      const key = familyKey(finding.project, finding.family);
      seen.add(key);
      if (finding.healed !== undefined) {
        const { journal } = finding.healed;
        events.push({
          ...familyEvent("healed", finding, finding.healed.changes, finding.healed.reorder, at),
          ...(journal === undefined ? {} : { journal }),
        });
      }
      const started = finding.flapping?.started ?? [];
      if (started.length > 0) {
        const changes = started.map((item) => item.change);
        events.push(familyEvent("heal_flapping", finding, changes, undefined, at, describeFlapping(started)));
      }
      const refusal = finding.refused?.join("\n");
      if (refusal !== undefined && this.#refused.get(key) !== refusal) {
        events.push(familyEvent("guard_refused", finding, finding.changes, finding.reorder, at, refusal));
      }
      if (refusal === undefined) this.#refused.delete(key);
      else this.#refused.set(key, refusal);
      const signature = driftSignature(finding.changes, finding.reorder);
      const before = this.#drift.get(key);
      if (signature === "") {
        if (before !== undefined) events.push(familyEvent("drift_resolved", finding, [], undefined, at));
        this.#drift.delete(key);
        continue;
      }
      if (before === undefined || before.signature !== signature) {
        const event = before === undefined ? "drift_opened" : "drift_changed";
        events.push(familyEvent(event, finding, finding.changes, finding.reorder, at));
      }
      this.#drift.set(key, { project: finding.project, family: finding.family, signature });
    }
    // A family dropped from the manifest (or from this watcher's shard) is no longer drifting here.
    for (const [key, remembered] of this.#drift) {
      if (seen.has(key)) continue;
      const message = "no longer watched: not in the manifest";
      events.push(familyEvent("drift_resolved", remembered, [], undefined, at, message));
      this.#drift.delete(key);
      this.#refused.delete(key);
    }
    if (failure === undefined) this.#failure = undefined;
    else appendAll(events, this.observeFailure(failure, at));
    return events;
  }

  /** One event per stretch of failures. */
  observeFailure(message: string, at: string): PcsyncEvent[] {
    const first = this.#failure === undefined;
    this.#failure = message;
    return first ? [cycleEvent("cycle_failed", message, at)] : [];
  }

  /** One event per broken version of the manifest. */
  observeInvalid(errors: readonly string[], at: string): PcsyncEvent[] {
    const signature = errors.join("\n");
    if (this.#invalid === signature) return [];
    this.#invalid = signature;
    return [cycleEvent("manifest_invalid", describeManifestErrors(errors), at)];
  }
}

function describeFlapping(started: NonNullable<FamilyFinding["flapping"]>["started"]): string {
  const records = started.map(
    ({ change, backoffMs }) =>
      `${change.name === null ? "a record without a name" : JSON.stringify(change.name)}${change.id === null ? "" : ` (id ${change.id})`}: left alone for ${describeBackoff(backoffMs)}`,
  );
  return `healed in ${FLAP_CYCLES} cycles in a row: something else keeps changing it; heal leaves it alone, then tries once more (each time it flaps again, twice as long, up to 1 h):\n${records.join("\n")}`;
}

function describeManifestErrors(errors: readonly string[], shown = 5): string {
  const more = errors.length > shown ? `\n(and ${errors.length - shown} more)` : "";
  return `the manifest failed validation; nothing was written:\n${errors.slice(0, shown).join("\n")}${more}`;
}
