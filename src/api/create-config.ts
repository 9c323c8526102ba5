// Creating a record without ever creating it twice: a POST whose outcome is unknown is settled by
// re-reading the family over a window longer than it could still commit in, before any resend.
//
// The rule. A POST's outcome is unknown when it was sent but got no definitive answer: a timeout,
// the connection lost after sending, 502/503/504, anything the client marks `outcomeUnknown`.
// Such a POST may still commit after the client gave up (it can wait in a load balancer's queue
// for a whole timeout, then take the service as long again), so it is never sent again while it
// might still commit:
//   1. The family is re-read at once (a dropped answer is the common case), then with backoff,
//      over a settle window that starts when the failed attempt gave up and lasts two and a half
//      request timeouts (a commit up to twice the timeout late, and a margin), and never less than
//      MIN_SETTLE_WINDOW_MS.
//   2. Any re-read that shows the record (new since the plan, the fields as sent) settles it: the
//      record is adopted and the create is done.
//   3. Only a re-read that started after the window closed, and does not show the record, proves
//      the POST did not commit. Only then is the POST sent again (retries + 1 POSTs at most).
//   4. When no such re-read can be made (the service is gone, the run is interrupted), the outcome
//      is unknown: CreateOutcomeUnknownError, which apply reports as unknown, never as failed.
//   4a. Settling one create takes at most the client's settle timeout (`--settle-timeout`, 120 s
//      by default), counted from its first give-up, whatever the number of POSTs: a window that
//      would end later is cut there, and a cut window can show the record (adopted) but never its
//      absence (unknown, not resent); no POST is sent once the settle time is over. So a create
//      costs at most its first POST, the settle timeout and one re-read, instead of a window of
//      2.5 request timeouts for each of up to `retries + 1` POSTs (over 6 minutes at defaults).
//   5. An answer that cannot be read (not JSON, the wrong shape, too large), or a redirect (never
//      followed), came after the service was done with the request: one re-read settles it, and
//      without the record it stays unknown and is never resent (settleAnsweredPost).
// The window is measured from the give-up, not from the send: how long the request already sat
// unanswered says nothing about when the service will get to it, and from the send the window
// would shrink by the timeout it already spent. The floor matters when --timeout is tiny: twice
// 0.1 s is shorter than a healthy service may take to process a request it has received.
// A copy that lands later still (beyond these bounds) is caught by the check after the family's
// creates (src/apply/dedupe-creates.ts), which keeps the lowest id.

import { PcsyncError } from "../errors.js";
import type { FamilyName } from "../families.js";
import { showsText, trimAsService } from "../service-text.js";
import type { PluginConfigInput, PluginConfigRecord } from "../wire-types.js";
import type { ApiClient } from "./client.js";
import { listAllConfigs } from "./endpoints.js";
import {
  isRequestError,
  isResponseError,
  notMadeAfter,
  OutcomeUnknownError,
  type RequestError,
  type ResponseError,
} from "./errors.js";
import { collectionPath } from "./paths.js";

/**
 * The settle window as a multiple of the request timeout: the rule covers a commit up to twice the
 * timeout after the give-up, and the half on top keeps a commit at exactly that bound from racing
 * the read that decides.
 */
export const SETTLE_TIMEOUT_FACTOR = 2.5;
/** The shortest settle window, whatever the request timeout. */
export const MIN_SETTLE_WINDOW_MS = 1_000;

/** How long after a POST with unknown outcome gave up it may still commit, by the rule above. */
export function settleWindowMs(requestTimeoutMs: number): number {
  return Math.max(SETTLE_TIMEOUT_FACTOR * requestTimeoutMs, MIN_SETTLE_WINDOW_MS);
}

export interface CreateConfigOptions {
  /**
   * Ids of the family's records before this create (apply has them from its plan read). When
   * absent, the family is read first, which costs one request.
   */
  knownIds?: ReadonlySet<number> | undefined;
  /** Re-reads shared with other creates of the family (apply passes one per family). */
  reader?: FamilyReader | undefined;
  /**
   * The settle window, instead of `settleWindowMs(client.requestTimeoutMs)`: only for a service
   * known never to commit a request after answering it (an in-process emulator in tests).
   */
  settleWindowMs?: number | undefined;
}

export interface CreateResult {
  record: PluginConfigRecord;
  /** How many times the POST was sent (throttled attempts the client repeated count once). */
  posts: number;
  /**
   * Some POST's outcome was unknown at first: beyond the rule's bounds, a late copy of it may still
   * land, so the check after the family's creates also looks for one.
   */
  uncertain: boolean;
  /** The record came from a re-read, not from the service's answer. */
  adopted: boolean;
}

/** Creates the record and returns it; see `createConfigDetailed`. */
export async function createConfig(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  body: PluginConfigInput,
  options: CreateConfigOptions = {},
): Promise<PluginConfigRecord> {
  return (await createConfigDetailed(client, projectId, family, body, options)).record;
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
  const windowMs = options.settleWindowMs ?? settleWindowMs(client.requestTimeoutMs);
  const maxPosts = client.retryOptions.retries + 1;
  // Settling this create ends by its first give-up plus the settle timeout, however many POSTs.
  let settleDeadline: number | undefined;
  for (let posts = 1; ; posts += 1) {
    let failure: RequestError;
    try {
      const record = await client.requestJson({ method: "POST", url, body, safety: "unsafe" }, "record");
      return { record, posts, uncertain: posts > 1, adopted: false };
    } catch (error) {
      if (isRequestError(error, "request_aborted") && posts > 1) {
        throw error.settledAs(
          "the earlier POST did not create it (the family was re-read after its settle window)",
          error.outcomeUnknown,
        );
      }
      if (isFinalAnswer(error))
        return await settleAnsweredPost(client, reader, body, knownIds, url, error, posts);
      if (!isRequestError(error) || !error.outcomeUnknown) throw error;
      failure = error;
    }

    const giveUpAt = client.now();
    settleDeadline ??= giveUpAt + client.settleTimeoutMs;
    // This POST's window, cut at the deadline: a cut window can find the record, never prove it absent.
    const readForMs = Math.max(0, Math.min(windowMs, settleDeadline - giveUpAt));
    client.traceLine(
      `POST ${url.pathname}: outcome unknown; re-reading the family for ${readForMs} ms before deciding`,
    );
    const settled = await settle(client, reader, body, knownIds, giveUpAt, readForMs);
    if (settled.kind === "found") {
      client.traceLine(
        `POST ${url.pathname}: record ${settled.record.id} was created by the attempt that failed`,
      );
      return { record: settled.record, posts, uncertain: true, adopted: true };
    }
    if (settled.kind === "unknown") {
      throw new OutcomeUnknownError("create_outcome_unknown", client.describeRequest("POST", url), {
        failure: failure.message,
        why: settled.why,
        conclusiveAfter: giveUpAt + windowMs,
      });
    }
    if (readForMs < windowMs) {
      throw new OutcomeUnknownError("create_outcome_unknown", client.describeRequest("POST", url), {
        failure: failure.message,
        why: `the settle time of ${formatSeconds(client.settleTimeoutMs)} (--settle-timeout) ended before the window that proves a create was not made (${formatSeconds(windowMs)}: 2.5 times --timeout, at least 1 s) had closed, and re-reading the family until then found no record made by it; it was not sent again`,
        conclusiveAfter: giveUpAt + windowMs,
      });
    }
    // The inner error counts one POST; say how often it was really sent, and that none stuck. No
    // POST goes out once the settle time is over: its own outcome could not be settled.
    if (posts >= maxPosts || client.now() >= settleDeadline)
      throw failure.settledAs(notMadeAfter(posts), false);
    client.traceLine(`POST ${url.pathname}: not created by the attempt that failed; sending it again`);
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

type FinalAnswerError =
  | ResponseError<"malformed_response" | "response_too_large">
  | RequestError<"redirect_not_followed">;

/**
 * The service answered, but not with a record: what it said cannot be read (it may well have been
 * a 201), or it redirected (a 303 after a POST may follow a create). Either way it is done with
 * the request: nothing can commit later, and sending it again could make a copy.
 */
function isFinalAnswer(error: unknown): error is FinalAnswerError {
  return (
    isResponseError(error, "malformed_response", "response_too_large") ||
    isRequestError(error, "redirect_not_followed")
  );
}

/**
 * A POST the service answered with something unreadable (not JSON, the wrong shape, too large) or
 * with a redirect. The service has finished with the request (it answered), so nothing can commit
 * later and no window is needed: one re-read shows the record (adopted), or the outcome stays
 * unknown, never resent, since a record the service made from it in some other form would be
 * duplicated.
 */
async function settleAnsweredPost(
  client: ApiClient,
  reader: FamilyReader,
  body: PluginConfigInput,
  knownIds: ReadonlySet<number>,
  url: URL,
  error: FinalAnswerError,
  posts: number,
): Promise<CreateResult> {
  const failedRequest = client.describeRequest("POST", url);
  const answer = isRequestError(error, "redirect_not_followed")
    ? "the service answered with a redirect, which pcsync does not follow"
    : "the service's answer could not be read";
  let records: PluginConfigRecord[];
  try {
    ({ records } = await reader.read(client.now()));
  } catch (rereadError) {
    if (!(rereadError instanceof PcsyncError)) throw rereadError;
    throw new OutcomeUnknownError("create_outcome_unknown", failedRequest, {
      failure: error.message,
      why: `${answer}, and re-reading the family to check failed (${rereadError.message})`,
    });
  }
  const record = findCreatedRecord(records, body, knownIds);
  if (record === undefined) {
    throw new OutcomeUnknownError("create_outcome_unknown", failedRequest, {
      failure: error.message,
      why: `${answer}, and re-reading the family found no record made by it (the service may have stored it in another form); it was not sent again`,
    });
  }
  client.traceLine(`POST ${url.pathname}: ${answer}; record ${record.id} found by re-reading the family`);
  return { record, posts, uncertain: true, adopted: true };
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
      const { records } = await reader.read(final ? giveUpAt + windowMs : giveUpAt);
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
  readonly #client: ApiClient;
  readonly #projectId: string;
  readonly #family: FamilyName;
  readonly #pending: Array<{ startedAt: number; result: Promise<FamilyListing> }> = [];

  constructor(client: ApiClient, projectId: string, family: FamilyName) {
    this.#client = client;
    this.#projectId = projectId;
    this.#family = family;
  }

  /** The family as listed by a read that started at or after `notBefore` (the client's clock). */
  read(notBefore: number): Promise<FamilyListing> {
    for (let index = this.#pending.length - 1; index >= 0; index -= 1) {
      const pending = this.#pending[index];
      if (pending && pending.startedAt >= notBefore) return pending.result;
    }
    const startedAt = this.#client.now();
    const result = listAllConfigs(this.#client, this.#projectId, this.#family).then((records) => ({
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
