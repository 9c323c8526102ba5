// Creating a record without ever creating it twice: a failed POST is judged by what its failure
// proves (src/api/attempt-proof.ts), and is sent again only once a re-read of the family shows it did not
// make the record. It is apply's rule: the client only sends the POST.
//
// The rule, by kind of failure:
//   - refused before processing: a 429 (the client already waited the pause the service asked for
//     and sent it again, retry.ts), a request never sent, or a 503 with Retry-After. A 503 with
//     Retry-After is confirmed by one re-read; then the POST is sent again after the stated pause
//     (or the backoff, if longer). A 429 that reaches this file was refused for good: not made.
//   - answered by the service: a 5xx with the service's own `{type, code, detail}` body, 500
//     included. It may have committed before answering (Django does not wrap a request in a
//     transaction by default), but nothing of it commits later: one re-read started after the
//     answer decides. Found: adopted. Absent: sent again after backoff.
//   - still in flight: a timeout, a connection lost after sending, 502/504, a 5xx whose body is
//     not the service's (a proxy's page). It may still commit after the client gave up (it can
//     wait in a load balancer's queue for a whole timeout, then take the service as long again),
//     so it is never sent again while it might still commit: the family is re-read at once (a
//     dropped answer is the common case), then with backoff, over a proof window that starts when
//     the attempt gave up and lasts two and a half request timeouts (at least 1 s). Any re-read
//     that shows the record adopts it; only a re-read that started after the window closed, and
//     does not show the record, proves the POST did not commit, and allows the next POST.
//   - answered with something that is not a record (not JSON, the wrong shape, too large, a
//     redirect): one re-read shows the record (adopted), or the outcome stays unknown and it is
//     never sent again, since the service may hold it in a form pcsync cannot match.
//   - rejected (a 4xx other than 429): not made; never sent again.
// Each POST is shown not to have made the record before the next goes out. A create sends at most
// `CREATE_POSTS` POSTs that end in flight (3 by default: each costs a whole proof window),
// and at most `retries + 1` POSTs in all (9 by default: one answered or refused costs a re-read and
// a backoff). The settle time (`--settle-timeout`) bounds one create from its first failed POST,
// but is never smaller than a whole proof window for each POST that may end in flight, so no
// window is ever cut short: it only keeps long pauses from sending a POST late.
// When no deciding re-read can be made (the service is gone, the run is interrupted), the outcome
// is unknown: CreateOutcomeUnknownError, which apply reports as unknown, never as failed.
// The re-reads and the resend go ahead of the client's own pacing (client.ahead), though never
// ahead of a pause the service asked for: the rest of the family waits for this create.
// The window is measured from the give-up, not from the send: how long the request already sat
// unanswered says nothing about when the service will get to it.
// A copy that lands later still (beyond these bounds) is caught by the check after the family's
// creates (src/apply/dedupe-creates.ts), which keeps the lowest id.

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

/** How the create is settled (the run's --settle-timeout and --treat-5xx-as-in-flight), and what apply knows. */
export interface CreateConfigOptions extends CreateRule {
  /**
   * Ids of the family's records before this create (apply has them from its plan read). When
   * absent, the family is read first, which costs one request.
   */
  knownIds?: ReadonlySet<number> | undefined;
  /** Re-reads shared with other creates of the family (apply passes one per family). */
  reader?: FamilyReader | undefined;
  /**
   * For a family whose records another family's list also shows: that list, with its ids before
   * the creates. posthog-2024 keeps a config made through pipeline_frontend_apps_configs whose
   * plugin is not a frontend app under plugin_configs only: a POST that made it and failed leaves
   * no trace in its own family's list, and sending it again would make another. Found there, it is
   * this create's record (the check after the creates takes it back and says why).
   */
  elsewhere?: readonly { reader: FamilyReader; knownIds: ReadonlySet<number> }[] | undefined;
}

export interface CreateResult {
  record: PluginConfigRecord;
  /** How many times the POST was sent (throttled attempts the client repeated count once). */
  posts: number;
  /**
   * Some POST failed in a way that may have made the record: beyond the rule's bounds, a late copy
   * of it may still land, so the check after the family's creates also looks for one.
   */
  uncertain: boolean;
  /** The record came from a re-read, not from the service's answer. */
  adopted: boolean;
  /** What each failed POST proved, in order (empty when the first POST was answered with the record). */
  failures: AttemptProof[];
}

/**
 * Creates the record by the rule at the top of this file. Throws CreateOutcomeUnknownError when
 * the outcome could not be settled; any other error means the record was not created (the last
 * POST's failure, once every POST was shown not to have created it).
 */
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

/**
 * A failed POST (a request's failure; any other as it is) with what re-reading found since added to
 * its message: it did not make the record, so its outcome is known.
 */
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

/**
 * Re-reads the family from the give-up until a read that started after the window closed: the
 * record found, or proven absent, or unknown when that last read cannot be made.
 */
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

/**
 * Reads of one family, shared by the creates that settle at the same time: a read already under
 * way that started late enough is joined instead of sending another.
 */
export class FamilyReader {
  readonly #pending: Array<{ startedAt: number; result: Promise<FamilyListing> }> = [];

  constructor(
    private readonly client: ApiClient,
    private readonly projectId: string,
    private readonly family: FamilyName,
  ) {}

  /** The family as listed by a read that started at or after `notBefore` (the client's clock). */
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
  /** When the read started (the client's clock): the service's answer is no older. */
  startedAt: number;
  records: PluginConfigRecord[];
}

/**
 * The record a create made: new since `knownIds`, same plugin, and the same values for the fields
 * the service stores as sent; name and description as sent or trimmed as the service trims them
 * (posthog-2024). A null name or description, or one empty once trimmed, may come back as the
 * plugin's own (posthog-2024), so those only count when they hold text. Newest first if several match.
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

/** What re-reading found of a create whose outcome was unknown, sent `posts` times. */
function notMadeAfter(posts: number): string {
  return posts > 1
    ? `the create was sent ${posts} times, and none of them made the record (re-reading the family showed so)`
    : "it did not make the record (re-reading the family showed so)";
}
