// The rollback use case that `pcsync rollback` and a rollout's halted waves share: how a rollback
// ends is its outcome (shown, refused, applied, nothing left), never a throw, and the journal it
// undoes is free again once it has ended, whichever way.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, updateConfig } from "../../src/api/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import type { DesiredState } from "../../src/manifest/types.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { SecretRegistry } from "../../src/redact.js";
import { applyWithJournal } from "../../src/run/apply-with-journal.js";
import { type RollbackSteps, rollBackJournal } from "../../src/run/rollback-journal.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const KEY = "phx_rollback_use_case_key";
let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
});
afterAll(() => work.remove());

describe("rollBackJournal", () => {
  it("shows, refuses a change made since, then with force undoes the run, and leaves the journal free", async ({
    onTestFinished,
  }) => {
    const emulator = await startEmulator({
      profile: "seed",
      keys: [{ key: KEY, scopes: null, projects: "*" }],
    });
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY, retry: { retries: 0 } });
    onTestFinished(async () => {
      await client.close();
      await emulator.close();
    });
    const desired: DesiredState = {
      families: [
        desiredFamily("1", "plugin_configs", [desiredConfig({ name: "Probe", plugin: 1, enabled: true })]),
      ],
    };
    const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
    const { plan } = computePlan(desired, current);
    if (plan === undefined) throw new Error("no plan");
    const files = { cwd: work.path, inputs: [], secrets: new SecretRegistry() };
    const journal = join(work.path, "apply.jsonl");
    const applied = await applyWithJournal(client, plan, current, {
      journalPath: journal,
      start: { command: "apply", planFile: null },
      files,
      apply: { concurrency: 2 },
    });
    const created = applied.report.outcomes[0]?.id;
    if (typeof created !== "number") throw new Error("nothing created");

    const writes: string[] = [];
    const steps = (shown: string[]): RollbackSteps => ({
      connect: async () => client,
      onNote: () => undefined,
      show: async (state) => {
        shown.push(...state.plan.changes.map((change) => `${change.action} ${change.name}`));
      },
      apply: async (run) => {
        writes.push(run.start.command);
        return (
          await applyWithJournal(client, run.plan, run.current, {
            journalPath: join(work.path, `rollback-${writes.length}.jsonl`),
            start: run.start,
            files,
            alsoKnown: run.alsoKnown,
            apply: { concurrency: 2 },
          })
        ).report;
      },
    });
    const input = { journal, cwd: work.path, force: false, concurrency: 2 };

    const shown: string[] = [];
    const dry = await rollBackJournal({ ...input, dryRun: true }, steps(shown));
    expect(dry.result).toBe("shown");
    expect(shown).toEqual(["delete Probe"]);

    await updateConfig(client, "1", "plugin_configs", created, { enabled: false });
    const refused = await rollBackJournal(input, steps([]));
    expect(refused).toMatchObject({ result: "refused", clashes: [] });
    expect(refused.result === "refused" ? refused.conflicts.length : 0).toBe(1);
    expect(writes).toEqual([]);

    // The refusal let go of the journal: the forced rollback takes it.
    const forced = await rollBackJournal({ ...input, force: true }, steps([]));
    expect(forced.result).toBe("applied");
    expect(forced.result === "applied" ? forced.report.done : 0).toBe(1);
    expect(writes).toEqual(["rollback"]);

    const again = await rollBackJournal(input, steps([]));
    expect(again.result).toBe("nothing");
  });
});
