// What apply prints while it runs, read as a CI log: one line per finished change, a heartbeat
// every 10 s with done/total, elapsed and the time left; on a terminal, the time left on the
// progress line. The clock is a fake one the test moves: nothing here waits.

import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ApplyOutcome, ApplyReport } from "../../src/apply/types.js";
import { type ApplyProgressClock, createApplyProgress, HEARTBEAT_MS } from "../../src/cli/apply-progress.js";
import type { CliIo } from "../../src/cli/cli-io.js";
import { SecretRegistry } from "../../src/redact.js";
import { NOT_STARTED_LISTED, renderApplyReport } from "../../src/render/apply-report.js";
import { formatElapsed } from "../../src/render/outcome-line.js";

/** A clock whose time moves only when the test says, firing the timers it passes. */
function fakeClock(): ApplyProgressClock & { advance: (ms: number) => void; timers: number } {
  let now = 1_000_000;
  const timers = new Set<{ every: number; next: number; tick: () => void }>();
  return {
    now: () => now,
    every(ms, tick) {
      const timer = { every: ms, next: now + ms, tick };
      timers.add(timer);
      return () => timers.delete(timer);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers].filter((timer) => timer.next <= end).sort((a, b) => a.next - b.next)[0];
        if (due === undefined) break;
        now = due.next;
        due.next += due.every;
        due.tick();
      }
      now = end;
    },
    get timers() {
      return timers.size;
    },
  };
}

function captureIo(tty: boolean, env: Record<string, string> = {}): { io: CliIo; stderr: () => string } {
  const stderr = new PassThrough();
  let text = "";
  stderr.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  Object.assign(stderr, { isTTY: tty });
  return {
    io: { stdout: new PassThrough(), stderr, env, cwd: "/", secrets: new SecretRegistry() },
    stderr: () => text,
  };
}

const created = (index: number): ApplyOutcome => ({
  action: "create",
  project: "1",
  family: "plugin_configs",
  name: `Config ${index}`,
  id: 100 + index,
  source: `pcsync.yaml:${index}`,
  status: "done",
});

describe("apply progress without a terminal (CI)", () => {
  it("logs each finished change, and a heartbeat every 10 s with done/total, elapsed and time left", () => {
    const clock = fakeClock();
    const { io, stderr } = captureIo(false);
    const progress = createApplyProgress(io, 2000, { clock });
    // 8 changes a second: 480 a minute, the service's default rate limit.
    for (let done = 1; done <= 80; done += 1) {
      clock.advance(125);
      progress.onOutcome(done, 2000, created(done));
    }
    clock.advance(0);
    const lines = stderr().trim().split("\n");
    expect(lines[0]).toBe('created "Config 1" (id 101) in project 1 plugin_configs');
    expect(lines.filter((line) => line.startsWith("created "))).toHaveLength(80);
    // 10 s after the start: 80 done, 1920 left at 8/s is 4 minutes.
    expect(lines.filter((line) => line.startsWith("Still applying"))).toEqual([
      "Still applying: 79/2000 changes done, 10s elapsed, about 4m03s left",
    ]);
    // Silence (a long throttle) still gets a heartbeat every 10 s.
    clock.advance(3 * HEARTBEAT_MS);
    expect(stderr().trim().split("\n").slice(-3)).toEqual([
      "Still applying: 80/2000 changes done, 20s elapsed, about 8m00s left",
      "Still applying: 80/2000 changes done, 30s elapsed, about 12m00s left",
      "Still applying: 80/2000 changes done, 40s elapsed, about 16m00s left",
    ]);
    progress.finish();
    expect(clock.timers).toBe(0);
    clock.advance(60_000);
    expect(stderr()).not.toContain("1m");
  });

  it("says how each change ended; changes never started are left to the report", () => {
    const clock = fakeClock();
    const { io, stderr } = captureIo(true, { CI: "true" });
    const progress = createApplyProgress(io, 5, { clock });
    const base = created(1);
    progress.onOutcome(1, 5, { ...base, action: "update", status: "failed", message: "400: bad plugin" });
    progress.onOutcome(2, 5, { ...base, action: "delete" });
    progress.onOutcome(3, 5, { ...base, action: "reorder", name: null, id: null, moves: 3 });
    progress.onOutcome(4, 5, { ...base, status: "unknown", id: null, message: "timed out" });
    progress.onOutcome(5, 5, { ...base, status: "skipped", notStarted: true, message: "not started" });
    progress.finish();
    expect(stderr().split("\n")).toEqual([
      'failed to update "Config 1" (id 101) in project 1 plugin_configs: 400: bad plugin',
      'deleted "Config 1" (id 101) in project 1 plugin_configs',
      "reordered 3 records in project 1 plugin_configs",
      'unknown outcome of the create of "Config 1" in project 1 plugin_configs: timed out',
      "",
    ]);
  });
});

describe("apply progress on a terminal", () => {
  it("rewrites one line that gains the time left, and prints no heartbeat", () => {
    const clock = fakeClock();
    const { io, stderr } = captureIo(true);
    const progress = createApplyProgress(io, 100, { clock });
    clock.advance(20_000);
    progress.onOutcome(25, 100, created(25));
    clock.advance(HEARTBEAT_MS * 3);
    progress.finish();
    expect(stderr()).toContain("\r\u001b[2Kapplied 25/100 changes, 20s elapsed, about 1m00s left");
    expect(stderr()).not.toContain("Still applying");
    expect(stderr()).not.toContain("created ");
  });
});

describe("apply progress while the service's rate limit holds requests", () => {
  it("says so in the heartbeat, with the time until it resumes, and counts that time in the time left", () => {
    const clock = fakeClock();
    const { io, stderr } = captureIo(false);
    let pausedUntil = 0;
    const progress = createApplyProgress(io, 100, { clock, pausedUntil: () => pausedUntil });
    // 50 changes in 5 s, then the service asks everyone to wait 30 s.
    for (let done = 1; done <= 50; done += 1) {
      clock.advance(100);
      progress.onOutcome(done, 100, created(done));
    }
    pausedUntil = clock.now() + 30_000;
    clock.advance(HEARTBEAT_MS);
    const heartbeats = () =>
      stderr()
        .split("\n")
        .filter((line) => line.startsWith("Still applying"));
    // 5 s at the pace before the pause, plus the 25 s of it still to come.
    expect(heartbeats().at(-1)).toBe(
      "Still applying: 50/100 changes done, 10s elapsed, about 30s left; waiting: rate limited by the service, resuming in 25 s",
    );
    clock.advance(HEARTBEAT_MS);
    expect(heartbeats().at(-1)).toBe(
      "Still applying: 50/100 changes done, 20s elapsed, about 20s left; waiting: rate limited by the service, resuming in 15 s",
    );
    // Once it resumed, the plain pace again.
    clock.advance(2 * HEARTBEAT_MS);
    expect(heartbeats().at(-1)).toBe("Still applying: 50/100 changes done, 40s elapsed, about 40s left");
    progress.finish();
    expect(clock.timers).toBe(0);
  });

  it("counts the pause down on the terminal's line, though no change finishes meanwhile", async () => {
    const clock = fakeClock();
    const { io, stderr } = captureIo(true);
    let pausedUntil = 0;
    const progress = createApplyProgress(io, 10, { clock, pausedUntil: () => pausedUntil });
    clock.advance(1_000);
    progress.onOutcome(1, 10, created(1));
    pausedUntil = clock.now() + 12_000;
    // The line's own throttle (80 ms) is on the wall clock: wait it out before the redraw.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = stderr();
    clock.advance(1_000);
    expect(stderr().slice(before.length)).toContain(
      "applied 1/10 changes, 2s elapsed, about 20s left; waiting: rate limited by the service, resuming in 11 s",
    );
    progress.finish();
    expect(clock.timers).toBe(0);
  });
});

describe("the report of an interrupted apply", () => {
  it(`lists at most ${NOT_STARTED_LISTED} changes not started, then their count; its lines agree with the summary`, () => {
    const notStarted = (index: number): ApplyOutcome => ({
      ...created(index),
      id: null,
      status: "skipped",
      message: "not started: the run was interrupted",
      notStarted: true,
    });
    const outcomes = [
      ...Array.from({ length: 586 }, (_, index) => created(index)),
      ...Array.from({ length: 1414 }, (_, index) => notStarted(586 + index)),
    ];
    const report: ApplyReport = {
      outcomes,
      done: 586,
      failed: 0,
      skipped: 1414,
      unknown: 0,
      unchecked: 0,
      interrupted: true,
    };
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    renderApplyReport(report, out, { colour: false });
    expect(text).toContain(
      "Not started (1414): the run was interrupted before these changes; apply again to make them:\n",
    );
    expect(text.match(/^ {2}create "Config \d+" in project 1/gm)).toHaveLength(NOT_STARTED_LISTED);
    expect(text).toContain("  ... and 1394 more\n");
    expect(text).not.toContain("skipped:");
    expect(text).toContain("; 0 failed, 1414 not started, 0 skipped.");
  });
});

describe("durations in the log", () => {
  it.each([
    [0, "0s"],
    [59_400, "59s"],
    [59_600, "1m00s"],
    [245_000, "4m05s"],
    [3_720_000, "1h02m"],
  ])("%d ms is %s", (ms, text) => {
    expect(formatElapsed(ms)).toBe(text);
  });
});
