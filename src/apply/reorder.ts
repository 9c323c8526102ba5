// A family's reorder: one rearrange where it is harmless and works, else (or for what it did not move)
// a PATCH of `order` per record. The run's first rearrange finds out for all; the others wait for it.

import { isApiError, isRequestError } from "../api/index.js";
import { describeError } from "../errors.js";
import { showsEveryRecord } from "../family-lists.js";
import type { CurrentState, Plan, PlannedReorder } from "../plan/types.js";
import { REORDER_NOT_STARTED } from "./outcomes.js";
import type { RecordWriter } from "./record-writer.js";
import type { OutcomeStatus } from "./types.js";

export interface RearrangeProbe {
  /** Rearrange is refused, or keyed by something other than config ids (posthog-2024). */
  unusable: boolean;
  /** Settles at the first rearrange's answer: where it does nothing for us, one request learns that. */
  firstAnswer?: Promise<void>;
}

/**
 * posthog-2024 reads rearrange's keys as plugin ids: it is used only when no key can name a plugin of
 * the project's records (read from lists that show them all).
 */
function rearrangeIsSafe(reorder: PlannedReorder, plan: Plan, current: CurrentState): boolean {
  const lists = current.families.filter((item) => item.project === reorder.project);
  if (!showsEveryRecord(lists.map((item) => item.family))) return false;
  const pluginIds = new Set<number>();
  for (const list of lists) for (const record of list.records) pluginIds.add(record.plugin);
  for (const change of plan.changes) {
    const plugin = change.fields.plugin?.to;
    if (change.project === reorder.project && typeof plugin === "number") pluginIds.add(plugin);
  }
  return reorder.moves.every((move) => !pluginIds.has(move.id));
}

export async function applyReorder(
  writer: RecordWriter,
  reorder: PlannedReorder,
  plan: Plan,
  current: CurrentState,
  probe: RearrangeProbe,
): Promise<{ status: OutcomeStatus; message: string; notStarted?: boolean }> {
  const { project, family } = reorder;
  let pending = reorder.moves;
  let method = "PATCH order per record";
  const safe = rearrangeIsSafe(reorder, plan, current);
  let answerFirst: (() => void) | undefined;
  if (safe && !probe.unusable) {
    if (probe.firstAnswer) await probe.firstAnswer;
    else
      probe.firstAnswer = new Promise((resolve) => {
        answerFirst = resolve;
      });
  }
  if (safe && !probe.unusable) {
    try {
      const orders = Object.fromEntries(reorder.moves.map((move) => [String(move.id), move.to]));
      const records = await writer.rearrange(project, family, orders);
      const byId = new Map(records.map((record) => [record.id, record]));
      pending = reorder.moves.filter((move) => byId.get(move.id)?.order !== move.to);
      if (pending.length === 0)
        return { status: "done", message: `${reorder.moves.length} reordered by rearrange` };
      // Rearrange answered but did not move our records: it is keyed otherwise on this server.
      probe.unusable = true;
      method = "rearrange, then PATCH order for the records it did not move";
    } catch (error) {
      if (!isApiError(error, 403, 405, 404)) {
        if (isRequestError(error, "request_aborted")) return REORDER_NOT_STARTED;
        if (isRequestError(error) && error.outcomeUnknown) {
          return {
            status: "unknown",
            message: `rearrange failed: ${error.message}; it may or may not have been applied: run \`pcsync plan\` to see`,
          };
        }
        return { status: "failed", message: `rearrange failed: ${describeError(error)}` };
      }
      probe.unusable = true;
      method = `PATCH order per record (rearrange refused: ${error.status})`;
    } finally {
      answerFirst?.();
    }
  }
  const failures: string[] = [];
  let unknownMoves = 0;
  let notStarted = 0;
  await Promise.all(
    pending.map(async (move) => {
      try {
        const record = await writer.update("order", project, family, move.id, { order: move.to }, move.name);
        if (record.order !== move.to)
          failures.push(`id ${move.id}: order is ${record.order}, not ${move.to}`);
      } catch (error) {
        if (isRequestError(error, "request_aborted") && !error.outcomeUnknown) notStarted += 1;
        else if (isRequestError(error) && error.outcomeUnknown) unknownMoves += 1;
        failures.push(`id ${move.id}: ${describeError(error)}`);
      }
    }),
  );
  if (failures.length > 0) {
    // Unknown when no move is known to have failed: some may have been applied.
    const definite = failures.length - unknownMoves - notStarted;
    const status: OutcomeStatus = definite > 0 ? "failed" : unknownMoves > 0 ? "unknown" : "skipped";
    const seeWhich = unknownMoves > 0 ? "; run `pcsync plan` to see which moves were applied" : "";
    return {
      status,
      message: `${failures.length} of ${pending.length} moves failed (${method}): ${failures.join("; ")}${seeWhich}`,
      ...(notStarted === failures.length ? { notStarted: true } : {}),
    };
  }
  return { status: "done", message: `${reorder.moves.length} reordered by ${method}` };
}
