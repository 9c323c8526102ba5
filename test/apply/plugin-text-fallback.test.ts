// posthog-2024 shows the plugin's own description where a record's is null or "", and its lists
// carry no plugin_info to tell the two apart: a config meant to have no description must still
// read as unchanged, and writing one must not read as a write the server ignored.

import { afterEach, describe, expect, it } from "vitest";
import { applyPlan } from "../../src/apply/apply-plan.js";
import { buildManifest } from "../../src/export/build-manifest.js";
import type { DesiredState } from "../../src/manifest/types.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState, readFamily } from "../../src/read/read-current-state.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";
import {
  page,
  type RecordedRequest,
  record,
  sendJson,
  startScriptedServer,
  testClient,
} from "../support/scripted-server.js";

const PLUGIN = { id: 12, name: "Plugin", description: "Plugin text" };
const CONFIGS = "/api/projects/1/plugin_configs";
// Read with plugin_configs, whose list also shows the frontend apps here.
const FRONTEND_APPS = "/api/projects/1/pipeline_frontend_apps_configs";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A posthog-2024-like service holding config 7 of plugin 12, with `description` stored. */
async function startService(description: string | null) {
  const stored = { description };
  const show = (pluginInfo: unknown) =>
    record(7, {
      plugin: PLUGIN.id,
      description: stored.description || PLUGIN.description,
      plugin_info: pluginInfo,
    });
  const server = await startScriptedServer((request: RecordedRequest, response) => {
    const path = request.url.split("?")[0]?.replace(/\/$/, "");
    if (request.method === "GET" && path === CONFIGS) return sendJson(response, 200, page([show(null)]));
    if (request.method === "GET" && path === FRONTEND_APPS) return sendJson(response, 200, page([]));
    if (path !== `${CONFIGS}/7`) return sendJson(response, 404, {});
    if (request.method === "PATCH") stored.description = JSON.parse(request.body).description;
    return sendJson(response, 200, show(PLUGIN));
  });
  const { client } = testClient(server.url);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return { server, client };
}

const desiredWith = (description: string | null): DesiredState => ({
  families: [
    desiredFamily("1", "plugin_configs", [
      desiredConfig({ name: "config 7", plugin: PLUGIN.id, order: 7, description }),
    ]),
  ],
});

/** The requests, less the frontend apps' list (read to tell them from plugin_configs' own records). */
const requestsOf = (requests: RecordedRequest[]) =>
  requests
    .map((request) => `${request.method} ${request.url}`)
    .filter((request) => !request.startsWith(`GET ${FRONTEND_APPS}/?`));

describe("a description shown as the plugin's own (posthog-2024)", () => {
  for (const description of [null, ""]) {
    it(`reads as unchanged when the manifest wants ${JSON.stringify(description)}: one retrieve learns the plugin's text`, async () => {
      const { server, client } = await startService(null);
      const desired = desiredWith(description);
      const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
      expect(computePlan(desired, current).plan?.changes).toEqual([]);
      expect(requestsOf(server.requests)).toEqual([`GET ${CONFIGS}/?limit=1000`, `GET ${CONFIGS}/7/`]);

      // A description the manifest gives needs no plugin text: nothing more is retrieved.
      server.requests.length = 0;
      const given = desiredWith("Own text");
      const listed = await readCurrentState(client, listsToPlan(given), { concurrency: 2 });
      expect(computePlan(given, listed).plan?.changes.map((change) => change.fields)).toEqual([
        { description: { from: "Plugin text", to: "Own text" } },
      ]);
      expect(requestsOf(server.requests)).toEqual([`GET ${CONFIGS}/?limit=1000`]);
    });
  }

  it('applies a description emptied to "" and then reads it as done', async () => {
    const { client } = await startService("Own text");
    const desired = desiredWith("");
    const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
    const { plan } = computePlan(desired, current);
    if (!plan) throw new Error("no plan");
    expect(plan.changes).toHaveLength(1);
    const report = await applyPlan(client, plan, current, { concurrency: 1 });
    expect(report.outcomes.map((outcome) => [outcome.status, outcome.message])).toEqual([
      ["done", undefined],
    ]);
    const again = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
    expect(computePlan(desired, again).plan?.changes).toEqual([]);
  });

  it("is exported as null, while a description of the record's own is kept", async () => {
    for (const [description, exported] of [
      [null, null],
      ["Own text", "Own text"],
    ] as const) {
      const { server, client } = await startService(description);
      const records = await readFamily(client, {
        project: "1",
        family: "plugin_configs",
        pluginInfoFor: "all",
      });
      const result = buildManifest({ project: "1", families: [{ family: "plugin_configs", records }] });
      expect(result.families[0]?.configs[0]?.description).toBe(exported);
      expect(requestsOf(server.requests)).toEqual([`GET ${CONFIGS}/?limit=1000`, `GET ${CONFIGS}/7/`]);
    }
  });
});
