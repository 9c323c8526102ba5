// A key whose hourly rate limit is spent: the service asks for a wait far beyond the client's
// longest (90 s), end to end against the emulator on both profiles. The apply stops sending once
// told, says until when the key is throttled and that applying again then continues, and does.

import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PROFILE_NAMES, startEmulator } from "../../src/emulator/index.js";
import { runBuiltCli } from "../support/cli.js";
import { EXAMPLES } from "../support/paths.js";
import { temporaryDirectory } from "../support/work-dir.js";

const EXAMPLE_MANIFEST = join(EXAMPLES, "pcsync.yaml");
const KEY = "phx_throttled_key_0123456789abcdef";
const CONCURRENCY = 4;

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.each(PROFILE_NAMES)("an apply whose key's hourly limit runs out (%s)", (profile) => {
  it("sends nothing more once told, says until when, and applied again then finishes", async () => {
    const emulator = await startEmulator({ profile, keys: [{ key: KEY, scopes: null, projects: "*" }] });
    const directory = await temporaryDirectory();
    cleanup.push(
      () => emulator.close(),
      () => directory.remove(),
    );
    emulator.setFaults({ rateLimit: { perHour: 8 } });
    const apply = () =>
      runBuiltCli(["apply", "--auto-approve", "-f", EXAMPLE_MANIFEST, "--concurrency", String(CONCURRENCY)], {
        env: { PCSYNC_API_KEY: KEY, PCSYNC_BASE_URL: emulator.url },
        cwd: directory.path,
      });
    const throttled = await apply();
    expect(throttled.code).toBe(1);
    expect(throttled.stderr).toMatch(
      /apply incomplete: .*The service throttled this API key until \d{4}-\d\d-\d\dT[\d:.]+Z, longer than pcsync waits \(its hourly rate limit spent\?\), and the writes left were not sent: run apply again after then; it continues from where this run stopped/,
    );
    expect(throttled.stderr).toContain("not sent: the service throttled this API key until");
    // Only the requests already in flight when the first refusal came were refused: none after.
    const refused = emulator.requestLog.filter((entry) => entry.status === 429).length;
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(CONCURRENCY);
    expect(emulator.requestLog.length).toBeLessThanOrEqual(8 + CONCURRENCY);

    // The hour has passed: the same apply continues where it stopped, and nothing is left.
    emulator.setFaults({});
    const again = await apply();
    expect(again.code, again.stderr).toBe(0);
    const planned = await runBuiltCli(["plan", "-f", EXAMPLE_MANIFEST, "--detailed-exitcode"], {
      env: { PCSYNC_API_KEY: KEY, PCSYNC_BASE_URL: emulator.url },
      cwd: directory.path,
    });
    expect(planned.code, planned.stdout).toBe(0);
  });
});
