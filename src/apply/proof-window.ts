// How long an unanswered POST may still commit, so how long settling a create may take (create-config.ts):
// apart so the CLI can check a --settle-timeout.

import type { ApiClient } from "../api/index.js";

/** From apply's options, not the client's. */
export interface CreateRule {
  /** From the first failed POST; default and least: minimumSettleTimeoutMs. Times the client's timeScale. */
  settleTimeoutMs?: number | undefined;
  /** Any 5xx to a POST may still commit, whatever its body: for a proxy imitating the service's errors. */
  treat5xxAsInFlight?: boolean | undefined;
}

/** In-flight POSTs one create sends at most: each may cost a whole proof window. */
export const CREATE_POSTS = 3;

/**
 * The proof window in request timeouts: a commit up to twice the timeout after the give-up, and the
 * half on top keeps one at exactly that bound from racing the read that decides.
 */
export const SETTLE_TIMEOUT_FACTOR = 2.5;
export const MIN_SETTLE_WINDOW_MS = 1_000;

export function settleWindowMs(requestTimeoutMs: number, timeScale = 1): number {
  return Math.max(SETTLE_TIMEOUT_FACTOR * requestTimeoutMs, Math.round(MIN_SETTLE_WINDOW_MS * timeScale));
}

/** A whole proof window per POST: a window cut short can never show that a POST did not commit. */
export function minimumSettleTimeoutMs(requestTimeoutMs: number, createPosts: number, timeScale = 1): number {
  return createPosts * settleWindowMs(requestTimeoutMs, timeScale);
}

/** A settle time below the minimum is a RangeError: it would turn settleable creates into unknown ones. */
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
