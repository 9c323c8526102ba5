// The rule two racing applies follow after their creates (src/apply/dedupe-creates.ts), case by
// case against the emulator: who keeps which copy, what is never taken for a copy, and a failed
// check is reported rather than passed over.

import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { dedupeCreates } from "../../src/apply/dedupe-creates.js";
import type { ApplyOutcome } from "../../src/apply/types.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { PlannedChange } from "../../src/plan/types.js";
import { renderApplyReport } from "../../src/render/apply-report.js";
import { createRecord } from "../support/builders.js";
import { KEY, reliabilityData } from "../support/scenario.js";

let emulator: RunningEmulator | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await emulator?.close();
  client = undefined;
  emulator = undefined;
});

async function setUp(profile: "seed" | "posthog-2024" = "seed") {
  emulator = await startEmulator({ profile, data: reliabilityData() });
  client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY, retry: { retries: 0 } });
  return { emulator, client };
}

function createChange(
  name: string,
  plugin: number,
  family: PlannedChange["family"] = "plugin_configs",
): PlannedChange {
  return {
    action: "create",
    project: "1",
    family,
    name,
    id: null,
    fields: {
      plugin: { from: undefined, to: plugin },
      name: { from: undefined, to: name },
      enabled: { from: undefined, to: true },
      order: { from: undefined, to: 7 },
    },
    source: "pcsync.yaml:7",
  };
}

function doneOutcome(change: PlannedChange, id: number): ApplyOutcome {
  return {
    action: "create",
    project: "1",
    family: change.family,
    name: change.name,
    id,
    source: change.source,
    status: "done",
  };
}

const KNOWN = new Set([1, 2, 3, 4, 5, 6]);

describe("after its creates, a run", () => {
  it("deletes its copy when another run's copy has the lower id, and fixes the survivor's fields", async () => {
    const { client, emulator } = await setUp();
    const change = createChange("Twin", 3);
    // The other run got there first, with another order.
    const theirs = await createRecord(client, "1", "plugin_configs", {
      plugin: 3,
      name: "Twin",
      enabled: true,
      order: 9,
    });
    const ours = await createRecord(client, "1", "plugin_configs", {
      plugin: 3,
      name: "Twin",
      enabled: true,
      order: 7,
    });
    const [outcome] = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun: new Set([ours.id]),
      changes: [change],
      outcomes: [doneOutcome(change, ours.id)],
    });
    expect(outcome).toMatchObject({ status: "done", id: theirs.id, copiesRemoved: [ours.id] });
    expect(outcome?.message).toContain(
      `this run's copy (id ${ours.id}) was deleted and the survivor's order set`,
    );
    // The summary says so: a copy deleted is a write the plan did not show.
    const printed = new PassThrough();
    let text = "";
    printed.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    renderApplyReport(
      {
        outcomes: outcome ? [outcome] : [],
        done: 1,
        failed: 0,
        skipped: 0,
        unknown: 0,
        unchecked: 0,
        interrupted: false,
      },
      printed,
      { colour: false },
    );
    expect(text).toContain(`! duplicates removed: create "Twin" (id ${theirs.id})`);
    expect(text).toContain(
      "Apply complete: 1 created, 0 updated, 0 deleted, 0 reordered, 1 duplicate copy removed.",
    );
    const records = emulator.snapshot().records;
    expect(records.find((record) => record.id === ours.id)?.deleted).toBe(true);
    expect(records.find((record) => record.id === theirs.id)).toMatchObject({ deleted: false, order: 7 });
  });

  it("keeps its copy when the other run's copy has the higher id (that run deletes it)", async () => {
    const { client, emulator } = await setUp();
    const change = createChange("Twin", 3);
    const ours = await createRecord(client, "1", "plugin_configs", {
      plugin: 3,
      name: "Twin",
      enabled: true,
      order: 7,
    });
    await createRecord(client, "1", "plugin_configs", { plugin: 3, name: "Twin", enabled: true, order: 7 });
    const before = emulator.snapshot().records;
    const outcomes = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun: new Set([ours.id]),
      changes: [change],
      outcomes: [doneOutcome(change, ours.id)],
    });
    expect(outcomes).toEqual([doneOutcome(change, ours.id)]);
    expect(emulator.snapshot().records).toEqual(before);
  });

  it("never takes a record that existed before, one it made itself, or another plugin's config for a copy", async () => {
    // posthog-2024 lists frontend apps in plugin_configs too: a same-named app is another config.
    const { client, emulator } = await setUp("posthog-2024");
    const twin = { name: "Twin", enabled: true, order: 7 };
    const existing = await createRecord(client, "1", "plugin_configs", { plugin: 3, ...twin });
    const app = await createRecord(client, "1", "pipeline_frontend_apps_configs", { plugin: 41, ...twin });
    const ownOther = await createRecord(client, "1", "plugin_configs", { plugin: 3, ...twin });
    const ours = await createRecord(client, "1", "plugin_configs", { plugin: 3, ...twin });
    expect([existing.id, app.id, ownOther.id].every((id) => id < ours.id)).toBe(true);
    const change = createChange("Twin", 3);
    const before = emulator.snapshot().records;
    const outcomes = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: new Set([...KNOWN, existing.id]),
      createdByRun: new Set([ownOther.id, ours.id]),
      changes: [change],
      outcomes: [doneOutcome(change, ours.id)],
    });
    expect(outcomes).toEqual([doneOutcome(change, ours.id)]);
    expect(emulator.snapshot().records).toEqual(before);
  });

  it("keeps its create as done but unchecked when the check cannot read the family, and reads nothing without creates", async () => {
    const { client, emulator } = await setUp();
    const change = createChange("Twin", 3);
    const update: PlannedChange = { ...change, action: "update", id: 1 };
    emulator.resetRequestLog();
    const unchanged = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun: new Set(),
      changes: [update],
      outcomes: [{ ...doneOutcome(update, 1), action: "update" }],
    });
    expect(unchanged[0]?.status).toBe("done");
    expect(emulator.requestLog).toEqual([]);

    emulator.setFaults({ fail503Rate: 1 });
    const [outcome] = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun: new Set([40]),
      changes: [change],
      outcomes: [doneOutcome(change, 40)],
    });
    // The record was created (a 201 says so): the count must say so too, and the gap is named.
    expect(outcome).toMatchObject({ status: "done", id: 40, unchecked: true });
    expect(outcome?.message).toMatch(
      /^created as id 40, but the check for a copy of it \(a concurrent run's, or a late commit of a POST whose answer was lost\) could not run: re-reading the family failed \(503 GET .*\); run `pcsync plan` to see whether there is one$/,
    );
  });
});

describe("after its creates, a run whose POSTs had unknown outcomes", () => {
  const body = { plugin: 3, name: "Twin", enabled: true, order: 7 };
  const unknownOutcome = (change: PlannedChange): ApplyOutcome => ({
    ...doneOutcome(change, 0),
    id: null,
    status: "unknown",
    message: "POST timed out. The record may or may not have been created",
  });

  it("deletes a late copy of its own POST above the record it kept, which no other run would delete", async () => {
    const { client, emulator } = await setUp();
    const change = createChange("Twin", 3);
    const ours = await createRecord(client, "1", "plugin_configs", body);
    // The POST whose answer was lost committed after the one that was answered.
    const late = await createRecord(client, "1", "plugin_configs", body);
    const [outcome] = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun: new Set([ours.id]),
      changes: [change],
      outcomes: [doneOutcome(change, ours.id)],
      certainties: [{ uncertain: true }],
    });
    expect(outcome).toMatchObject({ status: "done", id: ours.id });
    expect(outcome?.message).toBe(
      `created as id ${ours.id}, and later copies of it were found (ids ${late.id}: a late commit of a POST whose answer was lost, or a concurrent run's); they were deleted, as the lowest id is kept`,
    );
    const live = emulator.snapshot().records.filter((record) => record.name === "Twin" && !record.deleted);
    expect(live.map((record) => record.id)).toEqual([ours.id]);
  });

  it("settles a create of unknown outcome from the check: the lowest copy is kept, the rest deleted", async () => {
    const { client, emulator } = await setUp();
    const change = createChange("Twin", 3);
    const first = await createRecord(client, "1", "plugin_configs", { ...body, order: 9 });
    const second = await createRecord(client, "1", "plugin_configs", body);
    const createdByRun = new Set<number>();
    const [outcome] = await dedupeCreates(client, {
      project: "1",
      family: "plugin_configs",
      knownIds: KNOWN,
      createdByRun,
      changes: [change],
      outcomes: [unknownOutcome(change)],
      certainties: [{ uncertain: true, conclusiveAfter: 0 }],
    });
    expect(outcome).toMatchObject({ status: "done", id: first.id });
    expect(outcome?.message).toBe(
      `its POST got no answer, and the check after the family's creates found the record (id ${first.id}); the later copies (ids ${second.id}) were deleted and the survivor's order set`,
    );
    expect(createdByRun.has(first.id)).toBe(true);
    const live = emulator.snapshot().records.filter((record) => record.name === "Twin" && !record.deleted);
    expect(live).toEqual([expect.objectContaining({ id: first.id, order: 7 })]);
  });

  it("reports a create of unknown outcome as failed once a read after its settle window shows no record", async () => {
    const { client } = await setUp();
    const change = createChange("Twin", 3);
    const settled = (conclusiveAfter: number) =>
      dedupeCreates(client, {
        project: "1",
        family: "plugin_configs",
        knownIds: KNOWN,
        createdByRun: new Set(),
        changes: [change],
        outcomes: [unknownOutcome(change)],
        certainties: [{ uncertain: true, conclusiveAfter }],
      });
    // The window has closed: absence is proven.
    const [closed] = await settled(Date.now() - 1);
    expect(closed?.status).toBe("failed");
    expect(closed?.message).toMatch(
      /A later read of the family, after the settle window, does not show the record: it was not created; run apply again$/,
    );
    // Still open: a late commit may yet land, so the outcome stays unknown.
    const [open] = await settled(Date.now() + 60_000);
    expect(open).toEqual(unknownOutcome(change));
  });
});

describe("after a create the family's list does not show (posthog-2024)", () => {
  it("keeps a record its own family has, whatever a list read missed, and deletes only one another family's list alone shows", async () => {
    const { client, emulator } = await setUp("posthog-2024");
    const missed = { read: async () => ({ startedAt: client.now(), records: [] }) };
    const check = async (change: PlannedChange, id: number) =>
      (
        await dedupeCreates(client, {
          project: "1",
          family: change.family,
          knownIds: KNOWN,
          createdByRun: new Set([id]),
          changes: [change],
          outcomes: [doneOutcome(change, id)],
          // A paged read that another client's delete and create made skip this record.
          reader: missed as never,
        })
      )[0];
    const live = (id: number) => emulator.snapshot().records.find((record) => record.id === id)?.deleted;

    // Plugin 41 is a frontend app: its config is the frontend family's, though the read missed it.
    const app = createChange("Missed App", 41, "pipeline_frontend_apps_configs");
    const made = await createRecord(client, "1", "pipeline_frontend_apps_configs", {
      plugin: 41,
      name: "Missed App",
      enabled: true,
      order: 7,
    });
    expect(await check(app, made.id)).toMatchObject({ status: "done", id: made.id });
    expect(live(made.id)).toBe(false);

    // Plugin 3 is not: the service keeps its config under plugin_configs only, and it goes.
    const stray = createChange("Not An App", 3, "pipeline_frontend_apps_configs");
    const wrong = await createRecord(client, "1", "pipeline_frontend_apps_configs", {
      plugin: 3,
      name: "Not An App",
      enabled: true,
      order: 8,
    });
    expect(await check(stray, wrong.id)).toMatchObject({
      status: "failed",
      message: expect.stringContaining("plugin 3 is not a frontend app"),
    });
    expect(live(wrong.id)).toBe(true);
  });
});
