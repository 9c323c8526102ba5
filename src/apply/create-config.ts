// Creating a record never twice (apply's rule; the client only sends the POST): a failed POST is judged by
// what its failure proves (src/api/attempt-proof.ts), resent only once a re-read shows it made nothing.
//
// The rule, by kind of failure:
//   - refused before processing: a 429 (retry.ts already waited and resent it: here it is final, not
//     made), a request never sent, or a 503 with Retry-After, which one re-read confirms before the
//     POST is sent again after the stated pause (or the backoff, if longer).
//   - answered by the service (a 5xx with its own `{type, code, detail}` body, 500 included): it may
//     have committed before answering (Django does not wrap a request in a transaction), but nothing
//     commits later: one re-read started after the answer decides. Found: adopted; absent: resent.
//   - still in flight (timeout, connection lost after sending, 502/504, a proxy's 5xx page): it may
//     commit after the give-up (a whole timeout in a load balancer's queue, then as long again), so
//     it is never resent while it might: the family is re-read at once (a dropped answer is common),
//     then with backoff, over a proof window from the give-up of 2.5 request timeouts (at least 1 s).
//     Any re-read showing the record adopts it; only one started after the window, not showing it,
//     proves no commit and allows the next POST. The window starts at the give-up, not the send: how
//     long the request sat says nothing about when the service will get to it.
//   - not a record (not JSON, wrong shape, too large, a redirect): one re-read adopts it, or the
//     outcome stays unknown and it is never resent (it may be stored in a form pcsync cannot match).
//   - rejected (a 4xx other than 429): not made; never resent.
// A create sends at most CREATE_POSTS POSTs that end in flight (each costs a proof window) and
// `retries + 1` in all. The settle time (--settle-timeout) bounds a create from its first failed POST
// but is never below a proof window per in-flight POST, so no window is cut short. With no deciding
// re-read possible (service gone, run interrupted) the outcome is unknown (create_outcome_unknown),
// never failed. Re-reads and resends go ahead of the client's pacing (client.ahead), never ahead of a
// pause the service asked for: the family waits for this create. A copy landing later still is caught
// by the check after the family's creates (dedupe-creates.ts), which keeps the lowest id.

import {
  type ApiClient,
  type AttemptFailure,
  type AttemptProof,
  attemptFailureOfError,
  collectionPath,
  isRequestError,
  listAllConfigs,
  proofOf,
  ServiceError,
} from "../api/index.js";
import type { RequestErrorCode, ServiceFacts } from "../api/service-error.js";
import { formatSeconds } from "../duration.js";
import { PcsyncError } from "../errors.js";
import type { FamilyName } from "../families.js";
import { showsText, trimAsService } from "../trim-as-service.js";
import type { PluginConfigInput, PluginConfigRecord } from "../wire-types.js";
import { CREATE_POSTS, type CreateRule, settleBudgetOf } from "./proof-window.js";

/** The run's settle rule, and what apply knows of the family. */
export interface CreateConfigOptions extends CreateRule {
  /** Ids of the family's records before this create; absent, the family is read first. */
  knownIds?: ReadonlySet<number> | undefined;
  /** Shared with the family's other creates. */
  reader?: FamilyReader | undefined;
  /**
   * Lists that also show this family's records, with their ids before the creates. posthog-2024 keeps
   * a frontend-apps config whose plugin is not a frontend app under plugin_configs only: a failed POST
   * that made it leaves no trace in its own list, and a resend would make another. Found there, it
   * is this create's record (the check after the creates takes it back and says why).
   */
  elsewhere?: readonly { reader: FamilyReader; knownIds: ReadonlySet<number> }[] | undefined;
}

export interface CreateResult {
  record: PluginConfigRecord;
  /** Throttled attempts the client repeated count once. */
  posts: number;
  /** A POST may have made the record: the check after the creates looks for a late copy. */
  uncertain: boolean;
  /** From a re-read, not the service's answer. */
  adopted: boolean;
  failures: AttemptProof[];
}

/** Throws create_outcome_unknown when it could not be settled; any other error means not created. */
export async function createConfigDetailed(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  body: PluginConfigInput,
  options: CreateConfigOptions = {},
): Promise<CreateResult> {
  const url = client.url(collectionPath(projectId, family));
  const reader = options.reader ?? new FamilyReader(client, projectId, family);
  const knownIds =
    options.knownIds ?? new Set((await reader.read(client.now())).records.map((record) => record.id));
  const { windowMs, settleTimeoutMs, treat5xxAsInFlight } = settleBudgetOf(client, options);
  const failures: AttemptProof[] = [];
  const post = () => client.requestJson({ method: "POST", url, body, safety: "unsafe" }, "record");
  const unknown = (failure: ServiceError, why: string, conclusiveAfter?: number) =>
    new ServiceError("create_outcome_unknown", client.describeRequest("POST", url), {
      failure: failure.message,
      why,
      ...(conclusiveAfter === undefined ? {} : { conclusiveAfter }),
    });
  // Settling this create ends by its first failure plus the settle time, however many POSTs.
  let settleDeadline: number | undefined;
  for (let posts = 1; ; posts += 1) {
    let failure: ServiceError;
    let facts: AttemptFailure | undefined;
    try {
      // A resend goes ahead of the others: the first POST showed this create is behind.
      const record = posts === 1 ? await post() : await client.ahead(post);
      // Any failure but a rejection may have made the record: a late copy of it is looked for.
      const uncertain = failures.some((failed) => failed !== "rejected");
      return { record, posts, uncertain, adopted: false, failures };
    } catch (error) {
      if (isRequestError(error, "request_aborted")) {
        if (posts === 1) throw error;
        throw settledAs(
          client,
          error,
          "the earlier POSTs did not create it (re-reading the family showed so)",
        );
      }
      facts = attemptFailureOfError(error);
      if (facts === undefined || !(error instanceof ServiceError)) throw error;
      failure = error;
    }
    const kind = proofOf(facts, { fiveXxInFlight: treat5xxAsInFlight });
    failures.push(kind);
    const giveUpAt = client.now();
    settleDeadline ??= giveUpAt + settleTimeoutMs;
    const notMade = (why: string) => settledAs(client, failure, why);
    // A re-read that was to decide failed: the outcome stays unknown (an error of another kind as it is).
    const rereadFailed = (error: unknown, what: string) => {
      if (isRequestError(error, "request_aborted") || client.signal?.aborted)
        return unknown(failure, "the run was interrupted before re-reading the family could settle it");
      if (!(error instanceof PcsyncError)) return error;
      return unknown(failure, `${what} (${error.message}); it was not sent again`);
    };
    const stated = isRequestError(failure, "api_error") ? failure.facts.retryAfterMs : undefined;

    if (kind === "rejected" || (kind === "refused" && !(facts.kind === "status" && facts.status === 503))) {
      // Not made. After earlier POSTs, say that re-reading showed none of them made it either.
      throw posts > 1 ? notMade(notMadeAfter(posts)) : failure;
    }
    let found: PluginConfigRecord | undefined;
    if (kind === "in_flight") {
      client.traceLine(
        `POST ${url.pathname}: ${facts.kind === "status" ? `${facts.status} not from the service` : "no answer"}; re-reading the family for ${windowMs} ms before deciding`,
      );
      const settled = await settle(client, reader, body, knownIds, giveUpAt, windowMs);
      if (settled.kind === "unknown") throw unknown(failure, settled.why, giveUpAt + windowMs);
      found = settled.kind === "found" ? settled.record : undefined;
    } else {
      // Answered, or refused with a stated pause: one read started after the answer decides.
      const answer =
        kind === "refused"
          ? "the service refused it with Retry-After"
          : kind === "answered"
            ? "the service answered it with its own error"
            : isRequestError(failure, "redirect_not_followed")
              ? "the service answered with a redirect, which pcsync does not follow"
              : "the service's answer could not be read";
      client.traceLine(`POST ${url.pathname}: ${answer}; re-reading the family once to decide`);
      try {
        const { records } = await client.ahead(() => reader.read(giveUpAt));
        found = findCreatedRecord(records, body, knownIds);
      } catch (error) {
        throw rereadFailed(error, `${answer}, and re-reading the family to check failed`);
      }
      if (found === undefined && kind === "unreadable")
        throw unknown(
          failure,
          `${answer}, and re-reading the family found no record made by it (the service may have stored it in another form); it was not sent again`,
        );
    }
    if (found === undefined && options.elsewhere !== undefined) {
      try {
        // The create's record in a list that also shows its family's records, made since it was first read.
        for (const list of options.elsewhere) {
          const { records } = await client.ahead(() => list.reader.read(giveUpAt));
          found = findCreatedRecord(records, body, list.knownIds);
          if (found !== undefined) break;
        }
      } catch (error) {
        throw rereadFailed(error, "re-reading the list that also shows this family's records failed");
      }
    }
    if (found !== undefined) {
      client.traceLine(`POST ${url.pathname}: record ${found.id} was created by the attempt that failed`);
      return { record: found, posts, uncertain: true, adopted: true, failures };
    }

    // Shown not made. The inner error counts one POST; say how often it was really sent.
    const inFlight = failures.filter((failed) => failed === "in_flight").length;
    if (inFlight >= CREATE_POSTS)
      throw notMade(
        `${notMadeAfter(posts)}; it was not sent again, since ${CREATE_POSTS} of them went unanswered (a proxy's 502 or 504, a timeout, a lost connection), each waited out for ${formatSeconds(windowMs)}: apply again once the service answers`,
      );
    if (posts > client.retryOptions.retries) throw notMade(notMadeAfter(posts));
    const pauseMs = Math.max(kind === "in_flight" ? 0 : client.backoffDelayMs(posts), stated ?? 0);
    if (stated !== undefined && stated > client.retryOptions.maxRetryAfterMs)
      throw notMade(
        `${notMadeAfter(posts)}; it was not sent again, since the service asked to wait ${formatSeconds(stated)}`,
      );
    if (client.now() + pauseMs > settleDeadline)
      throw notMade(
        `${notMadeAfter(posts)}; it was not sent again, since the settle time of ${formatSeconds(settleTimeoutMs)} (--settle-timeout) would be over first`,
      );
    client.traceLine(
      `POST ${url.pathname}: not created by the attempt that failed; sending it again${pauseMs > 0 ? ` in ${pauseMs} ms` : ""}`,
    );
    if (pauseMs > 0) {
      try {
        await client.sleep(pauseMs);
      } catch (error) {
        if (client.signal?.aborted)
          throw notMade(`${notMadeAfter(posts)}; the run was interrupted before it was sent again`);
        throw error;
      }
    }
  }
}

/** A request's failure, its message saying what re-reading found since: it made no record. */
function settledAs(client: ApiClient, failure: ServiceError, settled: string): ServiceError {
  if (!isRequestError(failure)) return failure;
  const facts = { ...failure.facts, outcomeUnknown: false, settled, hint: failure.hint };
  const request = { method: failure.method, path: failure.path, secrets: client.secrets };
  return new ServiceError(failure.code, request, facts as ServiceFacts<RequestErrorCode>);
}

type SettleResult =
  | { kind: "found"; record: PluginConfigRecord }
  | { kind: "absent" }
  | { kind: "unknown"; why: string };

/** Re-reads the family from the give-up until a read that started after the window closed. */
async function settle(
  client: ApiClient,
  reader: FamilyReader,
  body: PluginConfigInput,
  knownIds: ReadonlySet<number>,
  giveUpAt: number,
  windowMs: number,
): Promise<SettleResult> {
  const interrupted: SettleResult = {
    kind: "unknown",
    why: "the run was interrupted before re-reading the family could settle it",
  };
  // Time waited is the larger of the clock and the sleeps asked for: a real sleep never ends
  // early, and an injected one (tests) that returns at once still ends the window.
  let slept = 0;
  const elapsed = () => Math.max(client.now() - giveUpAt, slept);
  let delay = Math.max(1, client.retryOptions.baseDelayMs);
  for (;;) {
    if (client.signal?.aborted) return interrupted;
    const final = elapsed() >= windowMs;
    try {
      // Any read since the give-up can show the record; only one started after the window can
      // show its absence.
      const notBefore = final ? giveUpAt + windowMs : giveUpAt;
      const { records } = await client.ahead(() => reader.read(notBefore));
      const record = findCreatedRecord(records, body, knownIds);
      if (record) return { kind: "found", record };
      if (final) return { kind: "absent" };
    } catch (error) {
      if (isRequestError(error, "request_aborted") || client.signal?.aborted) return interrupted;
      if (!(error instanceof PcsyncError)) throw error;
      // A read inside the window may fail: the next one can still settle it.
      if (final) return { kind: "unknown", why: `re-reading the family to check failed (${error.message})` };
    }
    const wait = Math.min(delay, Math.max(0, windowMs - elapsed()));
    delay = Math.min(delay * 2, Math.max(1, client.retryOptions.maxDelayMs));
    if (wait > 0) {
      try {
        await client.sleep(wait);
      } catch (error) {
        if (client.signal?.aborted) return interrupted;
        throw error;
      }
      slept += wait;
    }
  }
}

/** Reads of one family: a read under way that started late enough is joined, not sent again. */
export class FamilyReader {
  readonly #pending: Array<{ startedAt: number; result: Promise<FamilyListing> }> = [];

  constructor(
    private readonly client: ApiClient,
    private readonly projectId: string,
    private readonly family: FamilyName,
  ) {}

  read(notBefore: number): Promise<FamilyListing> {
    for (let index = this.#pending.length - 1; index >= 0; index -= 1) {
      const pending = this.#pending[index];
      if (pending && pending.startedAt >= notBefore) return pending.result;
    }
    const startedAt = this.client.now();
    const result = listAllConfigs(this.client, this.projectId, this.family).then((records) => ({
      startedAt,
      records,
    }));
    const entry = { startedAt, result };
    this.#pending.push(entry);
    const forget = () => {
      const index = this.#pending.indexOf(entry);
      if (index >= 0) this.#pending.splice(index, 1);
    };
    result.then(forget, forget);
    return result;
  }
}

export interface FamilyListing {
  /** The client's clock: the service's answer is no older. */
  startedAt: number;
  records: PluginConfigRecord[];
}

/**
 * The record a create made: new since `knownIds`, same plugin, fields as sent (name and description
 * trimmed as posthog-2024 does; empty ones may come back as the plugin's own, so tell nothing). Newest first.
 */
export function findCreatedRecord(
  records: readonly PluginConfigRecord[],
  body: PluginConfigInput,
  knownIds: ReadonlySet<number>,
): PluginConfigRecord | undefined {
  const matches = records.filter(
    (record) =>
      !knownIds.has(record.id) &&
      (body.plugin === undefined || record.plugin === body.plugin) &&
      showsSentText(body.name, record.name) &&
      showsSentText(body.description, record.description) &&
      (body.order === undefined || record.order === body.order) &&
      (body.enabled === undefined || record.enabled === body.enabled),
  );
  return matches.sort((a, b) => b.id - a.id)[0];
}

/** Whether a record shows a sent name or description; unsent or empty text tells nothing. */
function showsSentText(sent: string | null | undefined, shown: string | null): boolean {
  if (typeof sent !== "string" || trimAsService(sent) === "") return true;
  return showsText(sent, shown);
}

function notMadeAfter(posts: number): string {
  return posts > 1
    ? `the create was sent ${posts} times, and none of them made the record (re-reading the family showed so)`
    : "it did not make the record (re-reading the family showed so)";
}
