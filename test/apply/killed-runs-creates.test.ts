// A create the service keeps in another family's list than asked (posthog-2024: a config asked of
// the frontend apps whose plugin is none) is taken back by the apply that made it, with the records
// that creates of a killed run sent unanswered may have made: never one that was there before each
// of those creates was sent (the intent's `kept`).

import { afterEach, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { applyOnce } from "../support/apply-in-process.js";
import { createRecord } from "../support/builders.js";
import { KEY, loadDesired } from "../support/scenario.js";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const MANIFEST = [
  "version: 1",
  "projects:",
  '  "1":',
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - { name: Mislaid, plugin: 3, enabled: true }",
].join("\n");

const BODY = { name: "Mislaid", plugin: 3, enabled: true, order: 1 };

/** A posthog-2024 emulator and a client of it, closed after the test; `live`: the config's records. */
async function onPosthog2024() {
  const emulator = await startEmulator({
    profile: "posthog-2024",
    keys: [{ key: KEY, scopes: null, projects: "*" }],
  });
  const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY, concurrency: 2 });
  cleanup.push(
    () => emulator.close(),
    () => client.close(),
  );
  const live = () =>
    emulator
      .snapshot()
      .records.filter((record) => record.name === "Mislaid" && !record.deleted)
      .map((record) => record.id);
  return { client, live };
}

it("takes back a killed run's record that its resume's create saw, and never the one both saw", async () => {
  const { client, live } = await onPosthog2024();
  // The manifest's own record of that name and plugin under plugin_configs, there before any run.
  const before = await createRecord(client, "1", "plugin_configs", BODY);
  // What the killed run's create made (the service keeps it under plugin_configs).
  const killedRuns = await createRecord(client, "1", "pipeline_frontend_apps_configs", BODY);
  expect(live()).toEqual([before.id, killedRuns.id]);

  const unanswered = {
    project: "1",
    family: "pipeline_frontend_apps_configs" as const,
    name: "Mislaid",
    plugin: 3,
  };
  const { report } = await applyOnce(client, loadDesired(MANIFEST), {
    earlierCreates: [
      // The killed run's create, and its resume's (which saw the killed run's record), both unanswered.
      { ...unanswered, kept: [before.id] },
      { ...unanswered, kept: [before.id, killedRuns.id] },
    ],
  });
  expect(report.outcomes.map((outcome) => outcome.message)).toEqual([
    expect.stringContaining(`it was deleted again (with record ${killedRuns.id}, made by an earlier run`),
  ]);
  expect(live()).toEqual([before.id]);
});

it("takes back a killed run's unanswered wrong-family record, never the plugin_configs record of its answered create", async () => {
  const { client, live } = await onPosthog2024();
  // The killed run made both: the manifest's plugin_configs config (answered), then the
  // wrong-family one (its answer lost to the kill).
  const own = await createRecord(client, "1", "plugin_configs", BODY);
  const lost = await createRecord(client, "1", "pipeline_frontend_apps_configs", BODY);
  const config = { project: "1", name: "Mislaid", plugin: 3 };
  const { report } = await applyOnce(client, loadDesired(MANIFEST), {
    earlierCreates: [
      { ...config, family: "plugin_configs", id: own.id, kept: [] },
      { ...config, family: "pipeline_frontend_apps_configs", kept: [] },
    ],
  });
  expect(report.outcomes.map((outcome) => outcome.message)).toEqual([
    expect.stringContaining(`it was deleted again (with record ${lost.id}, made by an earlier run`),
  ]);
  expect(live()).toEqual([own.id]);
});
