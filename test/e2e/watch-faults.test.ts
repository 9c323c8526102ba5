// E2E: heal under faults. Two watchers healing one project by mistake, and a watcher killed with
// SIGKILL in the middle of a heal then started again, both end with each config exactly once.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli, spawnCli } from "../support/cli.js";
import { createsManifest, names } from "../support/manifest-text.js";
import { openServer, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

async function expectEachOnce(server: TestServer, wanted: readonly string[]): Promise<void> {
  const listed = (await server.list(1, "plugin_configs")).map((record) => record.name);
  for (const name of wanted) expect(listed.filter((candidate) => candidate === name)).toHaveLength(1);
}

describe.concurrent("pcsync watch --mode heal under faults", { timeout: 90_000 }, () => {
  it("makes no duplicate when two watchers heal the same project at once", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { faults: { latencyMs: 20 } });
    const wanted = names("Twin", 8);
    const file = join(directory, "twins.yaml");
    await writeSettled(file, createsManifest(wanted));
    const heal = ["watch", "--once", "--mode", "heal", "-f", file];
    const results = await Promise.all([
      runBuiltCli(heal, { env: server.env, timeoutMs: 60_000 }),
      runBuiltCli(heal, { env: server.env, timeoutMs: 60_000 }),
    ]);
    // Each either healed (0) or saw the other's creates and removed its copies; none is an error.
    for (const result of results) expect(result.stderr).not.toMatch(/internal error/);
    await expectEachOnce(server, wanted);
    const after = await runBuiltCli(["watch", "--once", "-f", file], { env: server.env, timeoutMs: 60_000 });
    expect(after.code).toBe(0);
  });

  it("converges with no duplicate after a SIGKILL in the middle of a heal", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { faults: { latencyMs: 60 } });
    const wanted = names("Killed", 12);
    const file = join(directory, "killed.yaml");
    await writeSettled(file, createsManifest(wanted));
    const first = spawnCli(["watch", "--once", "--mode", "heal", "--concurrency", "2", "-f", file], {
      env: server.env,
      timeoutMs: 60_000,
    });
    const creates = () => server.emulator.requestLog.filter((entry) => entry.method === "POST").length;
    await waitFor(() => creates() >= 3, "the heal to be under way", 60_000);
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    expect(
      (await server.list(1, "plugin_configs")).filter((record) => record.name?.startsWith("Killed")).length,
    ).toBeLessThan(wanted.length);
    // The restarted heal waits for the creates the killed one had in flight (3.5 x --timeout at
    // most): every duration at 1/20.
    const again = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", file], {
      env: { ...server.env, PCSYNC_TIME_SCALE: "0.05" },
      timeoutMs: 60_000,
    });
    expect(again.code).toBe(0);
    await expectEachOnce(server, wanted);
    const check = await runBuiltCli(["watch", "--once", "-f", file], { env: server.env, timeoutMs: 60_000 });
    expect(check.code).toBe(0);
  });
});
