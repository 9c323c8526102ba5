// Decides which requests fail and how (see FaultOptions), and matches the log-error selectors. One
// seeded PRNG drives every random decision, so a seed replays the faults.

import type { FaultOptions, LogErrorFault, StoredRecord } from "./types.js";

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const RATES = [
  "fail503Rate",
  "fail429Rate",
  "dropWriteRate",
  "lateWriteRate",
  "commitThen500Rate",
  "proxyErrorRate",
] as const;
const COUNTS = [
  "latencyMs",
  "fail429WaitSeconds",
  "fail503RetryAfterSeconds",
  "maxPageSize",
  "lateWriteMs",
] as const;
/** Longer than the CLI waits for an answer (30 s). */
export const DEFAULT_LATE_WRITE_MS = 45_000;

/** Throws a RangeError naming the first option out of range; the CLI checks flags before this. */
export function checkFaultOptions(faults: FaultOptions): void {
  for (const name of RATES) {
    const rate = faults[name];
    if (rate !== undefined && !(rate >= 0 && rate <= 1)) {
      throw new RangeError(`faults.${name} must be between 0 and 1, got ${rate}`);
    }
  }
  const { perMinute, perHour } = faults.rateLimit ?? {};
  const counts: [string, number | undefined][] = COUNTS.map((name) => [name, faults[name]]);
  counts.splice(3, 0, ["rateLimit.perMinute", perMinute], ["rateLimit.perHour", perHour]);
  for (const [name, count] of counts) {
    if (count !== undefined && !(Number.isFinite(count) && count >= 0)) {
      throw new RangeError(`faults.${name} must be a non-negative number, got ${count}`);
    }
  }
  checkLogErrorFaults(faults.logErrors ?? []);
}

type Random = () => number;

/** mulberry32: floats in [0, 1), the same sequence for the same seed. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Per-key sliding windows of accepted request times, which give an exact "available in N seconds". */
export class SlidingWindowLimiter {
  private readonly windows: readonly { limit: number; ms: number }[];
  private readonly longestMs: number;
  private readonly history = new Map<string, number[]>();

  constructor({ perMinute, perHour }: NonNullable<FaultOptions["rateLimit"]>) {
    this.windows = [
      ...(perMinute === undefined ? [] : [{ limit: perMinute, ms: 60_000 }]),
      ...(perHour === undefined ? [] : [{ limit: perHour, ms: 3_600_000 }]),
    ];
    // The windows are listed shortest first.
    this.longestMs = this.windows.at(-1)?.ms ?? 0;
  }

  /** Undefined when every window has room; else whole seconds to wait (a refusal is not counted). */
  take(key: string, nowMs: number): number | undefined {
    if (this.windows.length === 0) return undefined;
    const times = (this.history.get(key) ?? []).filter((time) => time > nowMs - this.longestMs);
    let waitMs = 0;
    for (const window of this.windows) {
      const inWindow = times.filter((time) => time > nowMs - window.ms);
      if (inWindow.length < window.limit) continue;
      // This many must expire before one more fits; the last of them sets the wait.
      const mustExpire = inWindow.length - window.limit + 1;
      // A limit of 0 never frees up: the wait is the whole window.
      const freeingTime = inWindow[mustExpire - 1] ?? nowMs;
      waitMs = Math.max(waitMs, freeingTime + window.ms - nowMs);
    }
    this.history.set(key, times);
    if (waitMs > 0) return Math.max(1, Math.ceil(waitMs / 1000));
    times.push(nowMs);
    return undefined;
  }
}

export class FaultInjector {
  /** The log stream reads `logErrors` on every logs request. */
  options: Readonly<FaultOptions> = {};
  private random: Random = Math.random;
  limiter = new SlidingWindowLimiter({});

  constructor(faults: FaultOptions = {}) {
    this.configure(faults);
  }

  /** Replaces every setting: the random sequence and the limits start afresh. */
  configure(faults: FaultOptions): void {
    checkFaultOptions(faults);
    this.options = structuredClone(faults);
    this.random = createRandom(faults.seed ?? Math.floor(Math.random() * 2 ** 32));
    this.limiter = new SlidingWindowLimiter(faults.rateLimit ?? {});
  }

  roll(fault: (typeof RATES)[number]): boolean {
    const rate = this.options[fault];
    // No draw at rate 0, so enabling one fault does not shift another's sequence.
    return rate !== undefined && rate > 0 && this.random() < rate;
  }

  proxyError(): 502 | 504 | undefined {
    if (!this.roll("proxyErrorRate")) return undefined;
    return this.random() < 0.5 ? 502 : 504;
  }

  shouldDropWrite(method: string): boolean {
    return WRITE_METHODS.has(method) && this.roll("dropWriteRate");
  }

  lateWriteDelayMs(method: string): number {
    if (!WRITE_METHODS.has(method) || !this.roll("lateWriteRate")) return 0;
    return this.options.lateWriteMs ?? DEFAULT_LATE_WRITE_MS;
  }
}

export const DEFAULT_LOG_ERROR_RATIO = 0.5;

const SELECTOR_KINDS = ["name", "plugin", "description"] as const;

// A trailing "@..." is read as a ratio only when it looks like a number, so a text holding "@"
// (an address in a description) needs no escaping; a typo such as "@0,8" is refused, not matched.
const RATIO_LIKE = /^[0-9.,]+$/;

/** `name:GLOB`, `plugin:ID` or `description:TEXT`, optionally ending in `@RATIO` (0 to 1). */
export function parseLogErrorFault(spec: string): LogErrorFault {
  let body = spec;
  let ratio: number | undefined;
  const at = spec.lastIndexOf("@");
  if (at !== -1 && RATIO_LIKE.test(spec.slice(at + 1))) {
    const raw = spec.slice(at + 1);
    ratio = Number(raw);
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new RangeError(`the ratio "@${raw}" must be a number from 0 to 1 (e.g. @0.8 for 80% errors)`);
    }
    body = spec.slice(0, at);
  }
  const colon = body.indexOf(":");
  const kind = colon === -1 ? "" : body.slice(0, colon);
  const value = body.slice(colon + 1);
  if (!(SELECTOR_KINDS as readonly string[]).includes(kind)) {
    throw new RangeError(
      'a selector is name:GLOB, plugin:ID or description:TEXT, optionally ending in @RATIO (e.g. "description:BROKEN@0.8")',
    );
  }
  if (value === "") throw new RangeError(`${kind}: needs a value after the colon`);
  const withRatio = ratio === undefined ? {} : { ratio };
  if (kind === "plugin") {
    if (!/^[0-9]{1,15}$/.test(value))
      throw new RangeError(`plugin: takes a plugin id (a number), got "${value}"`);
    return { plugin: Number(value), ...withRatio };
  }
  return kind === "name" ? { name: value, ...withRatio } : { description: value, ...withRatio };
}

/** For in-process faults: one selector each, a ratio from 0 to 1. */
export function checkLogErrorFaults(faults: readonly LogErrorFault[]): void {
  for (const [index, fault] of faults.entries()) {
    const kinds = SELECTOR_KINDS.filter((kind) => kind in fault);
    if (kinds.length !== 1) {
      throw new RangeError(`faults.logErrors[${index}] must have exactly one of name, plugin or description`);
    }
    const ratio = fault.ratio ?? DEFAULT_LOG_ERROR_RATIO;
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new RangeError(`faults.logErrors[${index}].ratio must be between 0 and 1, got ${ratio}`);
    }
  }
}

function globToRegExp(glob: string): RegExp {
  const parts = glob.split("*").map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/** That of the first fault matching the record as it is now; case-sensitive, as written. */
export function logErrorRatio(
  faults: readonly LogErrorFault[],
  record: StoredRecord,
  text: { name: string; description: string },
): number | undefined {
  for (const fault of faults) {
    const matches =
      "plugin" in fault
        ? record.plugin === fault.plugin
        : "name" in fault
          ? globToRegExp(fault.name).test(text.name)
          : text.description.includes(fault.description);
    if (matches) return fault.ratio ?? DEFAULT_LOG_ERROR_RATIO;
  }
  return undefined;
}
