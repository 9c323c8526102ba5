// The logs endpoint with the synthesized stream, as a client reads it: which configs log, the
// stored entries in their place, and the log-error fault by each kind of selector, in both profiles.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { PROFILE_NAMES } from "../../src/emulator/index.js";
import { type EmulatorClient, startTestEmulator } from "../support/emulator.js";
import { obj, page } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs";
const DAY_OF_SECONDS = 24 * 60 * 60;

async function logCount(client: EmulatorClient, id: number, query = ""): Promise<number> {
  const reply = await client.get(`${CONFIGS}/${id}/logs/?limit=1${query === "" ? "" : `&${query}`}`);
  expect(reply.status).toBe(200);
  return page(reply.body).count;
}

/** Creates an enabled config of project 1 and returns its id. */
async function createConfig(client: EmulatorClient, fields: Record<string, unknown>): Promise<number> {
  const reply = await client.post(`${CONFIGS}/`, { plugin: 2, order: 50, enabled: true, ...fields });
  expect(reply.status).toBe(201);
  return Number(obj(reply.body).id);
}

/** Updates the config and returns its updated_at, the instant its errors start after. */
async function update(client: EmulatorClient, id: number, fields: Record<string, unknown>): Promise<string> {
  const reply = await client.patch(`${CONFIGS}/${id}/`, fields);
  expect(reply.status).toBe(200);
  return String(obj(reply.body).updated_at);
}

const since = (instant: string) => `after=${encodeURIComponent(instant)}`;
const until = (instant: string) =>
  `before=${encodeURIComponent(new Date(Date.parse(instant) + 1).toISOString())}`;

describe.each(PROFILE_NAMES)("the log stream (%s profile)", (profile) => {
  it("logs an entry a second for each enabled plugin config by default, the stored entries in their place", async () => {
    const client = await startTestEmulator({ profile });
    // GeoIP was created long ago: a full day of entries, then its six stored ones from 2024.
    expect(await logCount(client, 1)).toBe(DAY_OF_SECONDS + 6);
    const newest = page((await client.get(`${CONFIGS}/1/logs/?limit=3`)).body).results;
    expect(newest.map((entry) => entry.source)).toEqual(["PLUGIN", "PLUGIN", "PLUGIN"]);
    expect(Date.now() - Date.parse(String(newest[0]?.timestamp))).toBeLessThan(5_000);
    const oldest = page((await client.get(`${CONFIGS}/1/logs/?offset=${DAY_OF_SECONDS}`)).body).results;
    expect(oldest.map((entry) => entry.message)).toContain("Plugin reloaded after config change.");
    expect(oldest).toHaveLength(6);
    // Only the stored ERROR: the stream of a config no fault selects has none.
    expect(await logCount(client, 1, "type_filter=ERROR")).toBe(1);
    // A disabled config, a frontend app and a deleted (or, on posthog-2024, disabled) config: nothing.
    expect(await logCount(client, 2)).toBe(0);
    expect(await logCount(client, 4)).toBe(0);
    expect((await client.delete(`${CONFIGS}/3/`)).status).toBe(204);
    expect(await logCount(client, 3)).toBe(0);
  });

  it("shows only the stored entries with logRate 0", async () => {
    const client = await startTestEmulator({ profile, logRate: 0 });
    expect(await logCount(client, 1)).toBe(6);
    expect(await logCount(client, 3)).toBe(0);
  });

  it("logs ERRORs after the change that makes a config match, by description, and none before it", async () => {
    const client = await startTestEmulator({
      profile,
      logRate: 6000,
      faults: { logErrors: [{ description: "BROKEN" }] },
    });
    const id = await createConfig(client, { name: "checkout export", description: "fine" });
    await sleep(200);
    const changed = await update(client, id, { description: "v2 (BROKEN on purpose)" });
    await sleep(300);
    // Up to a fixed instant, so that the counts read one after the other are of the same entries.
    const upTo = `before=${encodeURIComponent(new Date().toISOString())}`;
    const before = await logCount(client, id, until(changed));
    const errorsBefore = await logCount(client, id, `${until(changed)}&type_filter=ERROR`);
    const errorsAfter = await logCount(client, id, `${since(changed)}&${upTo}&type_filter=ERROR`);
    const after = await logCount(client, id, `${since(changed)}&${upTo}`);
    expect(before).toBeGreaterThan(10);
    expect(errorsBefore).toBe(0);
    expect(after).toBeGreaterThan(20);
    // Half of them by default, from the first entry after the change on.
    expect(errorsAfter).toBe(Math.ceil(after / 2));
    // Fixed again: the selector no longer matches the config as it is now, and no entry is an ERROR.
    await update(client, id, { description: "v3" });
    expect(await logCount(client, id, "type_filter=ERROR")).toBe(0);
  });

  it("selects by name glob, by plugin id with a ratio, and follows faults changed at run time", async () => {
    const client = await startTestEmulator({ profile, faults: { logErrors: [{ name: "Legacy*" }] } });
    // Legacy S3 last changed a week ago: every entry of the day is after its change.
    expect(await logCount(client, 3, "type_filter=ERROR")).toBe(DAY_OF_SECONDS / 2);
    expect(await logCount(client, 1, "type_filter=ERROR")).toBe(1);
    client.emulator.setFaults({ logErrors: [{ plugin: 1, ratio: 0.1 }] });
    expect(await logCount(client, 3, "type_filter=ERROR")).toBe(0);
    expect(await logCount(client, 1, "type_filter=ERROR")).toBe(DAY_OF_SECONDS / 10 + 1);
    client.emulator.setFaults({ logErrors: [{ name: "legacy*" }] });
    expect(await logCount(client, 3, "type_filter=ERROR")).toBe(0);
  });

  it("matches a name as the profile shows it: posthog-2024 falls back to the plugin's own", async () => {
    const client = await startTestEmulator({
      profile,
      logRate: 6000,
      faults: { logErrors: [{ name: "BigQuery*", ratio: 1 }] },
    });
    const id = await createConfig(client, { plugin: 6, name: "" });
    await sleep(100);
    const errors = await logCount(client, id, "type_filter=ERROR");
    if (profile === "posthog-2024") expect(errors).toBeGreaterThan(0);
    else expect(errors).toBe(0);
  });

  it("counts and pages ERRORs since a change with limit and offset as a reader walks them", async () => {
    const client = await startTestEmulator({
      profile,
      faults: { logErrors: [{ name: "GeoIP", ratio: 0.25 }] },
    });
    const changedMsAgo = 10 * 60_000;
    const after = new Date(Date.now() - changedMsAgo).toISOString();
    const before = new Date(Date.now() - 1000).toISOString();
    const query = `type_filter=ERROR&after=${encodeURIComponent(after)}&before=${encodeURIComponent(before)}`;
    const first = page((await client.get(`${CONFIGS}/1/logs/?${query}&limit=50`)).body);
    const seen = [...first.results];
    let next = first.next;
    while (next !== null) {
      const body = page((await client.get(next.slice(client.emulator.url.length))).body);
      seen.push(...body.results);
      next = body.next;
    }
    expect(seen).toHaveLength(first.count);
    expect(first.count).toBeGreaterThanOrEqual(148);
    expect(new Set(seen.map((entry) => entry.type))).toEqual(new Set(["ERROR"]));
  });
});

describe("in-process options", () => {
  it("refuses a log fault without exactly one selector, a ratio out of range, or a negative rate", async () => {
    await expect(startTestEmulator({ faults: { logErrors: [{ name: "a", ratio: 2 }] } })).rejects.toThrow(
      "faults.logErrors[0].ratio must be between 0 and 1, got 2",
    );
    const twoSelectors = { name: "a", plugin: 1 } as unknown as { name: string };
    await expect(startTestEmulator({ faults: { logErrors: [twoSelectors] } })).rejects.toThrow(
      "faults.logErrors[0] must have exactly one of name, plugin or description",
    );
    await expect(startTestEmulator({ logRate: -1 })).rejects.toThrow(
      "logRate must be from 0 to 60000 entries per minute, got -1",
    );
  });
});

describe("the last change across restarts", () => {
  it("keeps where the errors start when the state is reloaded from the data file", async () => {
    const directory = await mkdtemp(join(tmpdir(), "pcsync-log-stream-"));
    try {
      const file = join(directory, "state.json");
      const options = { dataFile: file, logRate: 6000, faults: { logErrors: [{ description: "BROKEN" }] } };
      const first = await startTestEmulator(options);
      const id = await createConfig(first, { name: "canary" });
      await sleep(100);
      const changed = await update(first, id, { description: "BROKEN" });
      await sleep(200);
      const window = `${since(new Date(Date.parse(changed) - 100).toISOString())}&${until(new Date().toISOString())}&limit=100`;
      const beforeRestart = page((await first.get(`${CONFIGS}/${id}/logs/?${window}`)).body);
      await first.emulator.close();
      const second = await startTestEmulator(options);
      const afterRestart = page((await second.get(`${CONFIGS}/${id}/logs/?${window}`)).body);
      expect(afterRestart.results).toEqual(beforeRestart.results);
      const types = beforeRestart.results.map((entry) => [
        Date.parse(String(entry.timestamp)) > Date.parse(changed),
        entry.type,
      ]);
      expect(types).toContainEqual([true, "ERROR"]);
      expect(types.filter(([isAfter, type]) => !isAfter && type === "ERROR")).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
