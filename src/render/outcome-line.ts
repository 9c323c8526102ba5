// One line per finished change of an apply, for logs without a terminal (CI), as Terraform's
// "Creation complete" lines; and how long is left.

import type { ApplyOutcome } from "../apply/types.js";
import { quoteServerText } from "../neutralise-server-text.js";
import { plural } from "../plural.js";

const DONE_VERB = { create: "created", update: "updated", delete: "deleted", reorder: "reordered" } as const;

function record(outcome: ApplyOutcome): string {
  const name = outcome.name === null ? "(unnamed)" : quoteServerText(outcome.name);
  return outcome.id === null ? name : `${name} (id ${outcome.id})`;
}

/** Undefined for a change the run never started: the report lists those once, at the end. */
export function describeOutcomeLine(outcome: ApplyOutcome): string | undefined {
  if (outcome.notStarted === true) return undefined;
  const what = outcome.action === "reorder" ? plural(outcome.moves ?? 0, "record") : record(outcome);
  const subject = `${what} in project ${outcome.project} ${outcome.family}`;
  const reason = outcome.message === undefined ? "" : `: ${outcome.message}`;
  switch (outcome.status) {
    case "done":
      // The message says how ("2 reordered by rearrange"): the line says it once.
      return outcome.action === "reorder"
        ? `reordered ${subject}${outcome.message === undefined ? "" : ` ${outcome.message.replace(/^\d+ reordered /, "")}`}`
        : `${DONE_VERB[outcome.action]} ${subject}${outcome.unchecked === true ? reason : ""}`;
    case "failed":
      return `failed to ${outcome.action} ${subject}${reason}`;
    case "skipped":
      return `skipped the ${outcome.action} of ${subject}${reason}`;
    case "unknown":
      return `unknown outcome of the ${outcome.action} of ${subject}${reason}`;
  }
}

export function formatElapsed(milliseconds: number): string {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

export interface ServicePause {
  resumeInMs: number;
  /** From the start to the last finished change: the pace without the pause. */
  paceElapsedMs: number;
}

/** While the service's rate limit holds requests, the time left is the pace before it plus the pause. */
export function describeTiming(done: number, total: number, elapsedMs: number, pause?: ServicePause): string {
  const elapsed = `${formatElapsed(elapsedMs)} elapsed`;
  const waiting =
    pause === undefined
      ? ""
      : `; waiting: rate limited by the service, resuming in ${Math.ceil(pause.resumeInMs / 1000)} s`;
  if (done === 0 || done >= total) return `${elapsed}${waiting}`;
  const leftMs =
    pause === undefined
      ? (elapsedMs / done) * (total - done)
      : (pause.paceElapsedMs / done) * (total - done) + pause.resumeInMs;
  return `${elapsed}, about ${formatElapsed(leftMs)} left${waiting}`;
}

export function describePace(done: number, total: number, elapsedMs: number, pause?: ServicePause): string {
  return `${done}/${total} changes done, ${describeTiming(done, total, elapsedMs, pause)}`;
}
