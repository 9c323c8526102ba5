// A saved plan's apply killed with SIGKILL at random points, then `apply --plan --resume`: it
// converges to the plan with nothing duplicated and a journal that still reads. Then a rollback of
// that journal, under the reliability tests' fault mix (503s, 429s without Retry-After, writes
// dropped after commit), reaches the state before the apply. Both profiles.
// PCSYNC_UNDO_KILL_POINTS sets the kill points per profile (default 1, to keep `npm test` short; 20 for the soak).

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRandom } from "../../src/emulator/faults.js";
import { PROFILE_NAMES, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { parseJournal } from "../../src/journal/journal-format.js";
import { spawnCli } from "../support/cli.js";
import { runCliInProcess } from "../support/in-process.js";
import { KEY, loadDesired, MANIFEST_A, MANIFEST_B, reliabilityData } from "../support/scenario.js";
import { pickTestSeed } from "../support/seed.js";
import { differencesFromManifest, duplicateRecords } from "../support/state-checks.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const KILL_POINTS = Number(process.env.PCSYNC_UNDO_KILL_POINTS ?? 1);

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The live records, by what a user sees of them. */
function liveState(emulator: RunningEmulator): string {
  return JSON.stringify(
    emulator
      .snapshot()
      .records.filter((record) => !record.deleted)
      .map(({ id, name, plugin, enabled, order, description }) => ({
        id,
        name,
        plugin,
        enabled,
        order,
        description,
      }))
      .sort((a, b) => a.id - b.id),
  );
}

// `npm test` runs one kill point on seed, to stay short; the soak (PCSYNC_UNDO_KILL_POINTS=20) runs both
// profiles. posthog-2024's own habit (the plugin's text shown for an
// empty description) is covered cheaply in test/e2e/undo.test.ts.
const PROFILES_RUN = process.env.PCSYNC_UNDO_KILL_POINTS === undefined ? (["seed"] as const) : PROFILE_NAMES;

describe.each(PROFILES_RUN)("saved plan killed, resumed, rolled back (%s)", (profile) => {
  it(
    `converges after SIGKILL at ${KILL_POINTS} random points, and rolls back under faults`,
    async () => {
      const seed = pickTestSeed();
      const random = createRandom(seed);
      let onWrite: (() => void) | undefined;
      // Latency spreads the writes, so that the kill lands between and during them.
      const faults = { latencyMs: 10, fail429WaitSeconds: 0, seed };
      // The rollback meets the fault mix with every duration at 1/100, the client's
      // (PCSYNC_TIME_SCALE) and the emulator's stated wait alike: the defaults' proportions.
      const faultMix = {
        ...faults,
        fail503Rate: 0.15,
        fail429Rate: 0.1,
        fail429WaitSeconds: 0.01,
        dropWriteRate: 0.05,
      };
      const emulator = await startEmulator({
        profile,
        data: reliabilityData(),
        faults,
        keys: [{ key: KEY, scopes: null, projects: "*" }],
        log: (line) => {
          if (!line.startsWith("GET ")) onWrite?.();
        },
      });
      const directory = await temporaryDirectory();
      cleanup.push(directory.remove, () => emulator.close());
      const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY };
      // The resume waits for a create the killed run had in flight (3.5 x --timeout at most): every
      // duration of the runs after the kill at 1/20.
      const cli = (args: string[]) =>
        runCliInProcess(args, { env: { ...env, PCSYNC_TIME_SCALE: "0.05" }, cwd: directory.path });
      let kills = 0;

      for (let point = 1; point <= KILL_POINTS; point++) {
        const text = point % 2 === 1 ? MANIFEST_A : MANIFEST_B;
        const manifest = await writeManifest(directory.path, text, `manifest-${point}.yaml`);
        const plan = join(directory.path, `plan-${point}.json`);
        const journal = join(directory.path, `journal-${point}.jsonl`);
        const before = liveState(emulator);
        const made = await cli(["plan", "-f", manifest, "--out", plan]);
        expect(made.code, made.stderr).toBe(0);

        const writesBeforeKill = 1 + Math.floor(random() * 8);
        const delayMs = Math.floor(random() * 12);
        let writes = 0;
        const { child, done } = spawnCli(
          ["apply", "--plan", plan, "--journal", journal, "--concurrency", "2"],
          { env },
        );
        onWrite = () => {
          writes += 1;
          if (writes === writesBeforeKill) setTimeout(() => child.kill("SIGKILL"), delayMs);
        };
        const killed = await done;
        onWrite = undefined;
        if (killed.signal === "SIGKILL") kills += 1;
        else expect(killed.code, `${killed.stderr} (seed ${seed})`).toBe(0);

        const resumed = await cli(["apply", "--plan", plan, "--resume", "--journal", journal]);
        expect(resumed.code, `${resumed.stdout}${resumed.stderr} (seed ${seed}, point ${point})`).toBe(0);
        const planned = await cli(["plan", "-f", manifest, "--detailed-exitcode"]);
        expect(planned.code, `${planned.stdout} (seed ${seed}, point ${point})`).toBe(0);
        const after = emulator.snapshot();
        expect(duplicateRecords(after), `seed ${seed}`).toEqual([]);
        expect(differencesFromManifest(after, loadDesired(text)), `seed ${seed}`).toEqual([]);
        // Still a journal that reads, cut-off line and all.
        expect(parseJournal(await readFile(journal, "utf8"), journal).intents.length).toBeGreaterThan(0);
        // Resumed again with nothing left: the journal still gets its resume and its end.
        const again = await cli(["apply", "--plan", plan, "--resume", "--journal", journal]);
        expect(again.code, again.stderr).toBe(0);
        const lines = (await readFile(journal, "utf8")).trimEnd().split("\n");
        expect(lines.at(-2)).toContain('"type":"resume"');
        expect(JSON.parse(lines.at(-1) ?? "")).toMatchObject({ type: "end", summary: { done: 0 } });

        // The rollback under the fault mix: retried as a user would until it reports success.
        emulator.setFaults(faultMix);
        const rollback = () =>
          runCliInProcess(["rollback", "--journal", journal, "--auto-approve"], {
            env: { ...env, PCSYNC_TIME_SCALE: "0.01" },
            cwd: directory.path,
          });
        let rolledBack = await rollback();
        for (let attempt = 1; rolledBack.code === 1 && attempt < 4; attempt++) rolledBack = await rollback();
        emulator.setFaults(faults);
        expect(
          rolledBack.code,
          `${rolledBack.stdout}${rolledBack.stderr} (seed ${seed}, point ${point})`,
        ).toBe(0);
        expect(liveState(emulator), `seed ${seed}, point ${point}`).toBe(before);
      }
      if (KILL_POINTS > 1) expect(kills, `seed ${seed}`).toBeGreaterThan(0);
    },
    30_000 * KILL_POINTS,
  );
});
