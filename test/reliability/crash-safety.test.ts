// Crash safety: `pcsync apply` killed with SIGKILL at random points of its writes, then run again,
// converges with nothing duplicated; and `pcsync serve --data FILE`, killed while writes land,
// always leaves a file that parses, reloads, and holds every write it acknowledged.

import type { ChildProcess } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseEmulatorData } from "../../src/emulator/data-file.js";
import { createRandom } from "../../src/emulator/faults.js";
import {
  type EmulatorData,
  PROFILE_NAMES,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import { type CliRun, spawnCli } from "../support/cli.js";
import { durableState } from "../support/emulator-data.js";
import { runCliInProcess } from "../support/in-process.js";
import { KEY, loadDesired, MANIFEST_A, MANIFEST_B, reliabilityData } from "../support/scenario.js";
import { pickTestSeed } from "../support/seed.js";
import { differencesFromManifest, duplicateRecords, touchedOutsideScope } from "../support/state-checks.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.each(PROFILE_NAMES)("apply killed with SIGKILL, then run again (%s)", (profile) => {
  it("converges, with nothing duplicated and nothing outside the prune scope touched", async () => {
    const seed = pickTestSeed();
    const random = createRandom(seed);
    // Each write the emulator answers is a moment the apply may die at.
    let onWrite: (() => void) | undefined;
    const emulator: RunningEmulator = await startEmulator({
      profile,
      data: reliabilityData(),
      // Latency stretches the apply, so that the kill lands between and during its writes; dropped
      // writes add commits whose answer the (next) run never saw.
      faults: { latencyMs: 15, dropWriteRate: 0.1, seed },
      log: (line) => {
        if (!line.startsWith("GET ")) onWrite?.();
      },
    });
    const directory = await temporaryDirectory();
    cleanup.push(directory.remove, () => emulator.close());
    const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY };
    let kills = 0;

    const killedApply = async (manifest: string): Promise<void> => {
      const writesBeforeKill = 1 + Math.floor(random() * 6);
      const extraDelayMs = Math.floor(random() * 15);
      let writes = 0;
      const { child, done } = spawnCli(["apply", "--auto-approve", "-f", manifest, "--concurrency", "2"], {
        env,
      });
      onWrite = () => {
        writes += 1;
        if (writes === writesBeforeKill) setTimeout(() => child.kill("SIGKILL"), extraDelayMs);
      };
      const run = await done;
      onWrite = undefined;
      if (run.signal === "SIGKILL") kills += 1;
      else expect(run.code, `${run.stderr} (seed ${seed})`).toBe(0);
    };

    const convergesOn = async (text: string, before: EmulatorData) => {
      const manifest = await writeManifest(directory.path, text);
      const applied = await runCliInProcess(["apply", "--auto-approve", "-f", manifest], {
        env,
        cwd: directory.path,
      });
      expect(applied.code, `${applied.stdout}${applied.stderr} (seed ${seed})`).toBe(0);
      const planned = await runCliInProcess(["plan", "-f", manifest, "--detailed-exitcode"], {
        env,
        cwd: directory.path,
      });
      expect(planned.code, `${planned.stdout} (seed ${seed})`).toBe(0);
      const desired = loadDesired(text);
      const after = emulator.snapshot();
      expect(duplicateRecords(after), `seed ${seed}`).toEqual([]);
      expect(differencesFromManifest(after, desired), `seed ${seed}`).toEqual([]);
      expect(touchedOutsideScope(before, after, desired), `seed ${seed}`).toEqual([]);
    };

    // One kill, then the same manifest again.
    let before = emulator.snapshot();
    await killedApply(await writeManifest(directory.path, MANIFEST_A));
    await convergesOn(MANIFEST_A, before);

    // Two kills in a row on another manifest: the second run starts from a half-applied state.
    before = emulator.snapshot();
    const manifestB = await writeManifest(directory.path, MANIFEST_B);
    await killedApply(manifestB);
    await killedApply(manifestB);
    await convergesOn(MANIFEST_B, before);

    expect(kills, `seed ${seed}`).toBeGreaterThan(0);
  }, 40_000);
});

describe("a client killed mid-request", () => {
  it("does not keep the emulator from closing, whatever part of its request it sent", async () => {
    const emulator = await startEmulator({
      keys: [{ key: KEY, scopes: null, projects: "*" }],
      faults: { latencyMs: 20 },
    });
    const body = JSON.stringify({ description: "from a dying client" });
    const head = (length: number) =>
      `PATCH /api/projects/1/plugin_configs/1/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
    const requests = [head(body.length), head(body.length) + body.slice(0, 5), head(body.length) + body];
    await Promise.all(
      requests.map(
        (text) =>
          new Promise<void>((resolve) => {
            const socket = connect(emulator.port, "127.0.0.1", () => {
              socket.write(text);
              setTimeout(() => {
                socket.destroy();
                resolve();
              }, 5);
            });
          }),
      ),
    );
    const closed = await Promise.race([
      emulator.close().then(() => "closed"),
      new Promise((resolve) => setTimeout(() => resolve("still open after 5 s"), 5_000)),
    ]);
    expect(closed).toBe("closed");
  });
});

/** `pcsync serve --data file` in a child process, once it listens. */
async function startServeOn(
  file: string,
): Promise<{ child: ChildProcess; url: string; done: Promise<CliRun> }> {
  const { child, done } = spawnCli(["serve", "--port", "0", "--data", file, "--quiet", "--key", KEY]);
  const url = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    void done.then((run) =>
      reject(new Error(`serve exited early (code ${run.code}, signal ${run.signal}): ${run.stderr}`)),
    );
  });
  return { child, url, done };
}

/**
 * Sends `count` creates at once, each with its own name, and calls `onAnswer` as each is
 * acknowledged; returns the names acknowledged (a request cut off by the stop counts as not).
 */
async function concurrentCreates(
  url: string,
  count: number,
  onAnswer: (acknowledged: number) => void,
): Promise<{ name: string; id: number }[]> {
  const acknowledged: { name: string; id: number }[] = [];
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const name = `burst ${index}`;
      try {
        const response = await fetch(`${url}/api/projects/1/plugin_configs/`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ plugin: 1, order: index, name }),
        });
        if (response.status !== 201) return;
        const { id } = (await response.json()) as { id: number };
        acknowledged.push({ name, id });
        onAnswer(acknowledged.length);
      } catch {
        // Cut off by the kill or the stop: not acknowledged.
      }
    }),
  );
  return acknowledged;
}

describe("pcsync serve --data, a burst of writes", () => {
  it("killed with SIGKILL in the middle of 200 concurrent writes keeps every one it answered", async () => {
    const directory = await temporaryDirectory();
    cleanup.push(directory.remove);
    const file = join(directory.path, "state.json");
    const serve = await startServeOn(file);
    const acknowledged = await concurrentCreates(serve.url, 200, (answered) => {
      if (answered === 40) serve.child.kill("SIGKILL");
    });
    expect((await serve.done).signal).toBe("SIGKILL");
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);
    parseEmulatorData(JSON.parse(await readFile(file, "utf8")));
    const data = await durableState(file);
    const byId = new Map(data.records.map((record) => [record.id, record.name]));
    for (const { name, id } of acknowledged) expect(byId.get(id), name).toBe(name);
    expect(new Set(data.records.map((record) => record.id)).size).toBe(data.records.length);
  }, 20_000);

  it("stopped with SIGTERM while writes are in flight, commits them and leaves one whole file", async () => {
    const directory = await temporaryDirectory();
    cleanup.push(directory.remove);
    const file = join(directory.path, "state.json");
    const serve = await startServeOn(file);
    const acknowledged = await concurrentCreates(serve.url, 100, (answered) => {
      if (answered === 1) serve.child.kill("SIGTERM");
    });
    expect((await serve.done).code).toBe(0);
    // The writes already being served when the signal came were committed and answered.
    expect(acknowledged.length).toBeGreaterThan(1);
    // The stop folded the journal in: the data file alone holds every answered write.
    expect(await readdir(directory.path)).toEqual(["state.json"]);
    const data = parseEmulatorData(JSON.parse(await readFile(file, "utf8")));
    const byId = new Map(data.records.map((record) => [record.id, record.name]));
    for (const { name, id } of acknowledged) expect(byId.get(id), name).toBe(name);
  }, 20_000);
});

describe("pcsync serve --data, killed with SIGKILL while writes land", () => {
  it("leaves a data file that always parses, reloads, and holds every acknowledged write", async () => {
    const seed = pickTestSeed();
    const random = createRandom(seed);
    const directory = await temporaryDirectory();
    cleanup.push(directory.remove);
    const file = join(directory.path, "state.json");

    const startServe = () => startServeOn(file);

    let createdLastRound: string[] = [];
    for (let round = 1; round <= 4; round += 1) {
      const serve = await startServe();
      const call = (method: string, path: string, body: unknown) =>
        fetch(`${serve.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then((response) => {
          if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
          return response.text();
        });

      // Acknowledged: the emulator answered, so the write must survive the kill.
      const acknowledged = new Map<number, number>();
      const created: string[] = [];
      let killed = false;
      const patcher = async (recordId: number) => {
        for (let count = 1; !killed; count += 1) {
          try {
            await call("PATCH", `/api/projects/1/plugin_configs/${recordId}/`, {
              description: `round ${round} write ${count}`,
            });
            acknowledged.set(recordId, count);
          } catch {
            return;
          }
        }
      };
      const creator = async () => {
        for (let count = 1; !killed; count += 1) {
          const name = `r${round}-c${count}`;
          try {
            await call("POST", "/api/projects/1/plugin_configs/", { plugin: 1, order: 9, name });
            created.push(name);
          } catch {
            return;
          }
        }
      };
      const hammering = Promise.all([patcher(1), patcher(2), patcher(3), creator()]);
      // The kill lands while writes land: on a busy machine the first answer may take longer than
      // the random delay, and a round with nothing acknowledged would check nothing.
      await waitFor(() => acknowledged.size + created.length > 0, "a first acknowledged write");
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(random() * 300)));
      killed = true;
      serve.child.kill("SIGKILL");
      const run = await serve.done;
      await hammering;
      expect(run.signal).toBe("SIGKILL");

      const context = `round ${round}, seed ${seed}`;
      // The data file itself always parses; the state is the file with its journal replayed.
      parseEmulatorData(JSON.parse(await readFile(file, "utf8")));
      const data = await durableState(file);
      expect(acknowledged.size + created.length, context).toBeGreaterThan(0);
      for (const [recordId, count] of acknowledged) {
        const description = data.records.find((record) => record.id === recordId)?.description;
        // The acknowledged write, or the one in flight when the kill came.
        expect(
          [`round ${round} write ${count}`, `round ${round} write ${count + 1}`],
          `${context}: record ${recordId}`,
        ).toContain(description);
      }
      const names = new Set(data.records.map((record) => record.name));
      for (const name of created) expect(names.has(name), `${context}: created ${name}`).toBe(true);
      createdLastRound = created;
    }

    // A last start reloads the file, serves it, and on a clean stop leaves no temporary files.
    const serve = await startServe();
    const response = await fetch(`${serve.url}/api/projects/1/plugin_configs/?limit=1000`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { results: { name: string | null }[] };
    const listed = new Set(page.results.map((record) => record.name));
    for (const name of createdLastRound) expect(listed.has(name), `seed ${seed}: ${name}`).toBe(true);
    serve.child.kill("SIGTERM");
    expect((await serve.done).code).toBe(0);
    expect((await readdir(directory.path)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 30_000);
});
