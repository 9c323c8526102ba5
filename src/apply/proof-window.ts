// How long a POST nobody answered may still commit, and so how long settling one create may take:
// the rule behind create-config.ts and its numbers, apart so the CLI can check a --settle-timeout.

import type { ApiClient } from "../api/index.js";

/** How apply settles a create whose POST failed (create-config.ts): from apply's options, not the client's. */
export interface CreateRule {
  /**
   * The longest one create that failed is settled, from its first failed POST; no POST is sent
   * after it. Default, and at least: minimumSettleTimeoutMs. Multiplied by the client's timeScale.
   */
  settleTimeoutMs?: number | undefined;
  /**
   * Take every 5xx answer to a POST for one that may still commit (the proof window), whatever
   * its body: for a proxy that imitates the service's error envelope (attempt-proof.ts).
   */
  treat5xxAsInFlight?: boolean | undefined;
}

/** POSTs that end in flight one create sends at most: each may cost a whole proof window. */
export const CREATE_POSTS = 3;

/**
 * The proof window as a multiple of the request timeout: the rule covers a commit up to twice the
 * timeout after the give-up, and the half on top keeps a commit at exactly that bound from racing
 * the read that decides.
 */
export const SETTLE_TIMEOUT_FACTOR = 2.5;
/** The shortest proof window, whatever the request timeout (at time scale 1). */
export const MIN_SETTLE_WINDOW_MS = 1_000;

/** How long after a POST with unknown outcome gave up it may still commit. */
export function settleWindowMs(requestTimeoutMs: number, timeScale = 1): number {
  return Math.max(SETTLE_TIMEOUT_FACTOR * requestTimeoutMs, Math.round(MIN_SETTLE_WINDOW_MS * timeScale));
}

/**
 * The least settle time one create may be given: a whole proof window for each POST it may send,
 * since a window cut short can never show that a POST did not commit.
 */
export function minimumSettleTimeoutMs(requestTimeoutMs: number, createPosts: number, timeScale = 1): number {
  return createPosts * settleWindowMs(requestTimeoutMs, timeScale);
}

/**
 * The settle budget of a create through `client` under `rule`. A settle time below the minimum is a
 * RangeError: it would turn creates that can be settled into unknown ones.
 */
export function settleBudgetOf(
  client: ApiClient,
  rule: CreateRule = {},
): { windowMs: number; settleTimeoutMs: number; treat5xxAsInFlight: boolean } {
  const { requestTimeoutMs, timeScale } = client;
  const windowMs = settleWindowMs(requestTimeoutMs, timeScale);
  const leastMs = minimumSettleTimeoutMs(requestTimeoutMs, CREATE_POSTS, timeScale);
  const given = rule.settleTimeoutMs;
  const settleTimeoutMs = given === undefined ? leastMs : Math.max(1, Math.round(given * timeScale));
  if (!(settleTimeoutMs >= leastMs))
    throw new RangeError(
      `settleTimeoutMs must be at least ${leastMs} (${CREATE_POSTS} proof windows of ${windowMs} ms)`,
    );
  return { windowMs, settleTimeoutMs, treat5xxAsInFlight: rule.treat5xxAsInFlight === true };
}
