// How long a POST nobody answered may still commit, and so how long settling one create may take:
// the numbers behind create-config.ts, apart so the CLI can check a --settle-timeout against them.

import type { ApiClient } from "../api/index.js";

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

/** The proof window of `client`'s POSTs and the settle time of one create (see ApiClientOptions). */
export interface SettleBudget {
  windowMs: number;
  settleTimeoutMs: number;
}

/**
 * The client's settle budget: its settle time, by default (and at least) a whole proof window for
 * each POST a create may send; a smaller one is a RangeError, since it would turn creates that can
 * be settled into unknown ones.
 */
export function settleBudgetOf(client: ApiClient): SettleBudget {
  const { requestTimeoutMs, createPosts, timeScale } = client;
  const windowMs = settleWindowMs(requestTimeoutMs, timeScale);
  const leastMs = minimumSettleTimeoutMs(requestTimeoutMs, createPosts, timeScale);
  const settleTimeoutMs = client.settleTimeoutMs ?? leastMs;
  if (settleTimeoutMs < leastMs)
    throw new RangeError(
      `settleTimeoutMs must be at least ${leastMs} (${createPosts} proof windows of ${windowMs} ms)`,
    );
  return { windowMs, settleTimeoutMs };
}
