// E2E: how an apply that does not finish ends, against the emulator slowed by its latency fault.
// Interrupted (SIGINT, SIGTERM) or failed, its output ends with the journal and the command to run
// next (rollback; with a saved plan, --resume), and what the interruption adds is counts with at
// most NOT_STARTED_LISTED names a kind, not a line per change.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOT_STARTED_LISTED } from "../../src/render/apply-report.js";
import { type CliRun, spawnCli } from "../support/cli.js";
import { PC } from "../support/families.js";
import { createsManifest, manifest, names } from "../support/manifest-text.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const CHANGES = 60;

let server: TestServer;
let work: WorkDir;
beforeAll(async () => {
  // 100 ms a request at 2 at a time: 60 creates take over 3 s, time enough to signal mid-run.
  server = await startServer("seed", { faults: { latencyMs: 100 } });
  work = await temporaryDirectory();
});
afterAll(async () => {
  await server.close();
  await work.remove();
});

/** The built CLI in the work directory (where its journals go), against the slowed server. */
function spawnPcsync(args: readonly string[]) {
  return spawnCli(args, { cwd: work.path, env: server.env, timeoutMs: 60_000 });
}

/** Runs `args` and sends `signal` once `created` creates are logged (stderr, no terminal). */
async function interruptAfter(args: readonly string[], created: number, signal: NodeJS.Signals) {
  const run = spawnPcsync(args);
  await waitFor(
    () => (run.soFar().stderr.match(/^created "/gm)?.length ?? 0) >= created,
    `${created} creates`,
    30_000,
  );
  run.child.kill(signal);
  return run.done;
}

/** The journal named by the last lines of stderr, and those lines' commands. */
function endingOf(run: CliRun): { journal: string; lines: string[] } {
  const match = /\nJournal: (\S+\.jsonl)\n((?: {2}.+\n)+)$/.exec(run.stderr);
  expect(match, `stderr ends with the journal:\n${run.stderr.slice(-600)}`).not.toBeNull();
  return { journal: match?.[1] ?? "", lines: (match?.[2] ?? "").trimEnd().split("\n") };
}

/** Each kind of line lists at most NOT_STARTED_LISTED changes, and nothing else is per change. */
function expectBounded(stdout: string): void {
  const perChange = stdout.split("\n").filter((line) => / in project 1 plugin_configs \(/.test(line));
  const byKind = (pattern: RegExp) => perChange.filter((line) => pattern.test(line)).length;
  expect(byKind(/^✓ done: |^ {2}create ".*" \(id \d+\)/)).toBeLessThanOrEqual(NOT_STARTED_LISTED);
  expect(byKind(/^ {2}create "[^"]*" in /)).toBeLessThanOrEqual(NOT_STARTED_LISTED);
  expect(stdout).not.toMatch(/^! unchecked: /m);
  expect(stdout).not.toMatch(/^… skipped: /m);
  expect(perChange.length).toBeLessThanOrEqual(2 * NOT_STARTED_LISTED);
}

describe.concurrent("an apply that does not finish ends with its journal and what to run next", () => {
  it("SIGINT mid-run: exit 130, counts and at most 20 names a kind, then the rollback command", async () => {
    const file = await work.write("sigint.yaml", createsManifest(names("Interrupted", CHANGES)));
    const run = await interruptAfter(
      ["apply", "-f", file, "--auto-approve", "--concurrency", "2"],
      NOT_STARTED_LISTED + 3,
      "SIGINT",
    );
    expect(run.code, run.stderr).toBe(130);
    const summary =
      /^Apply interrupted: (\d+) created, 0 updated, 0 deleted, 0 reordered; 0 failed, (\d+) not started, 0 skipped(?:, \d+ unknown)?(?:, (\d+) unchecked)?\.$/m.exec(
        run.stdout,
      );
    expect(summary, run.stdout).not.toBeNull();
    const [created, notStarted] = [Number(summary?.[1]), Number(summary?.[2])];
    expect(created).toBeGreaterThan(NOT_STARTED_LISTED);
    expect(created + notStarted).toBeLessThanOrEqual(CHANGES);
    // More done than listed: a sample, and the journal for the rest.
    expect(run.stdout).toContain(`✓ done (${created}):\n`);
    expect(run.stdout).toContain(
      `  ... and ${created - NOT_STARTED_LISTED} more (the journal lists every one)\n`,
    );
    expect(run.stdout).toContain(`  ... and ${notStarted - NOT_STARTED_LISTED} more\n`);
    if (summary?.[3] !== undefined)
      expect(run.stdout).toContain(`! unchecked (${summary[3]}): the run was interrupted before the check`);
    expectBounded(run.stdout);

    const { journal, lines } = endingOf(run);
    expect(lines).toEqual([`  undo this apply: pcsync rollback --journal ${journal}`]);
    // The error comes just before: the journal is the last thing said.
    expect(run.stderr).toMatch(
      /pcsync: apply interrupted by SIGINT: \d+ done, \d+ not started, 0 failed\. Run `pcsync plan` to see what is left, then apply again to finish\.\nJournal: /,
    );
    // The command given works: it deletes what the run created.
    const undo = await spawnPcsync(["rollback", "--journal", journal, "--auto-approve"]).done;
    expect(undo.code, undo.stderr).toBe(0);
    expect((await server.list(1, PC)).filter((record) => record.name?.startsWith("Interrupted "))).toEqual(
      [],
    );
  }, 90_000);

  it("SIGTERM during a saved plan's apply: exit 143, and the --resume command given finishes it", async () => {
    const file = await work.write("sigterm.yaml", createsManifest(names("Terminated", CHANGES)));
    const saved = await spawnPcsync(["plan", "-f", file, "-o", "sigterm-plan.json"]).done;
    expect(saved.code, saved.stderr).toBe(0);
    const run = await interruptAfter(
      ["apply", "--plan", "sigterm-plan.json", "--concurrency", "2"],
      3,
      "SIGTERM",
    );
    expect(run.code, run.stderr).toBe(143);
    expectBounded(run.stdout);
    const { journal, lines } = endingOf(run);
    expect(lines).toEqual([
      `  undo this apply: pcsync rollback --journal ${journal}`,
      `  if it was cut short, finish it: pcsync apply --plan sigterm-plan.json --resume --journal ${journal}`,
    ]);
    const resumed = await spawnPcsync([
      "apply",
      "--plan",
      "sigterm-plan.json",
      "--resume",
      "--journal",
      journal,
      "--concurrency",
      "4",
    ]).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const made = (await server.list(1, PC)).filter((record) => record.name?.startsWith("Terminated "));
    expect(new Set(made.map((record) => record.name)).size).toBe(CHANGES);
    expect(made).toHaveLength(CHANGES);
    // A complete run ends with its journal too.
    expect(endingOf(resumed).lines[0]).toBe(`  undo this apply: pcsync rollback --journal ${journal}`);
  }, 90_000);

  it("a failed apply: exit 1, the failure, a sample of what was done, then the journal and rollback", async () => {
    const done = names("Made", NOT_STARTED_LISTED + 5);
    const file = await work.write(
      "failing.yaml",
      manifest(
        createsManifest(done).trimEnd(),
        "        - name: Broken",
        "          plugin: 999",
        "          enabled: true",
      ),
    );
    const run = await spawnPcsync(["apply", "-f", file, "--auto-approve", "--concurrency", "4"]).done;
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^✗ failed: create "Broken" in project 1 plugin_configs \(.*\): 400 /m);
    expect(run.stdout).toContain(`✓ done (${done.length}):\n`);
    expect(run.stdout).toContain("  ... and 5 more (the journal lists every one)\n");
    expectBounded(run.stdout);
    const { journal, lines } = endingOf(run);
    expect(lines).toEqual([`  undo this apply: pcsync rollback --journal ${journal}`]);
    expect(run.stderr).toMatch(/pcsync: apply incomplete: 1 failed, \d+ skipped, \d+ done\..*\nJournal: /);
  }, 60_000);
});
