// The actions (rearrange, job, frontend) and every difference between the seed and posthog-2024
// profiles, asserted side by side.

import { describe, expect, it } from "vitest";
import { LEGACY, READ_ONLY, startTestEmulator, WRITE_ONLY } from "../support/emulator.js";
import { errorBody, list, obj, page } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs";
const FRONTEND = "/api/projects/1/pipeline_frontend_apps_configs";

describe("seed profile actions", () => {
  it("rearranges by config id within the family and returns the family as a bare array", async () => {
    const client = await startTestEmulator();
    const reply = await client.patch(`${CONFIGS}/rearrange/`, {
      orders: { "3": 1, "1": 3, "4": 9, "999": 5 },
    });
    expect(reply.status).toBe(200);
    const records = list(reply.body);
    expect(records.map((record) => [record.id, record.order])).toEqual([
      [3, 1],
      [2, 2],
      [1, 3],
    ]);
    // Config 4 belongs to the other family: untouched.
    expect(obj((await client.get(`${FRONTEND}/4`)).body).order).toBe(1);
  });

  it("rejects a malformed rearrange body with 400 and changes nothing", async () => {
    const client = await startTestEmulator();
    expect((await client.patch(`${CONFIGS}/rearrange`, {})).body).toEqual(
      errorBody("validation_error", "required", "This field is required.", "orders"),
    );
    for (const orders of [[1, 2], { abc: 1 }, { "1": "first" }, { "1": 2, "2": null }]) {
      const reply = await client.patch(`${CONFIGS}/rearrange`, { orders });
      expect(reply.status).toBe(400);
      expect(obj(reply.body)).toMatchObject({
        type: "validation_error",
        code: "invalid_input",
        attr: "orders",
      });
    }
    expect(client.emulator.snapshot().records.find((record) => record.id === 1)?.order).toBe(1);
  });

  it("queues a job, answering with the record; the job type is required", async () => {
    const client = await startTestEmulator();
    const reply = await client.post(`${CONFIGS}/1/job/`, {
      job: { type: "Export historical events", payload: { a: 1 } },
    });
    expect(reply.status).toBe(200);
    expect(obj(reply.body)).toMatchObject({ id: 1, name: "GeoIP" });
    expect((await client.post(`${CONFIGS}/1/job`, { job: { payload: {} } })).body).toEqual(
      errorBody("validation_error", "required", "This field is required.", "job__type"),
    );
    expect((await client.post(`${CONFIGS}/1/job`, {})).body).toEqual(
      errorBody("validation_error", "required", "This field is required.", "job"),
    );
  });

  it("serves the frontend module as JavaScript exporting getFrontendApp()", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(`${FRONTEND}/4/frontend/`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/javascript; charset=UTF-8");
    expect(reply.text).toMatch(/export function getFrontendApp\(/);
    const module = (await import(`data:text/javascript,${encodeURIComponent(reply.text)}`)) as {
      getFrontendApp: (require: unknown) => { app: { pluginConfigId: number } };
    };
    expect(module.getFrontendApp(undefined).app.pluginConfigId).toBe(4);
  });
});

describe("posthog-2024 profile", () => {
  it("overlaps the families: plugin_configs shows frontend apps, the frontend family only them", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    expect(page((await client.get(CONFIGS)).body).results.map((record) => record.id)).toEqual([1, 4, 2, 3]);
    expect(page((await client.get(FRONTEND)).body).results.map((record) => record.id)).toEqual([4]);
    expect((await client.get(`${CONFIGS}/4`)).status).toBe(200);
    expect((await client.get(`${FRONTEND}/1`)).status).toBe(404);
    expect((await client.patch(`${FRONTEND}/1`, { name: "x" })).status).toBe(404);
    expect((await client.delete(`${FRONTEND}/1`)).status).toBe(500);
    // A frontend app created through plugin_configs appears in both.
    const created = obj((await client.post(CONFIGS, { plugin: 42, order: 5 })).body);
    expect(page((await client.get(FRONTEND)).body).results.map((record) => record.id)).toContain(created.id);
  });

  it("only disables on DELETE, and an unknown id is a 500", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const reply = await client.delete(`${CONFIGS}/1`);
    expect(reply.status).toBe(204);
    expect(obj((await client.get(`${CONFIGS}/1`)).body)).toMatchObject({ enabled: false, deleted: false });
    expect(page((await client.get(CONFIGS)).body).results.map((record) => record.id)).toContain(1);
    const unknown = await client.delete(`${CONFIGS}/999`);
    expect(unknown.status).toBe(500);
    expect(unknown.body).toEqual(errorBody("server_error", "error", "A server error occurred."));
    // Removing from the list takes PATCH deleted: true.
    expect(obj((await client.patch(`${CONFIGS}/1`, { deleted: true })).body)).toMatchObject({
      deleted: true,
    });
    expect(page((await client.get(CONFIGS)).body).results.map((record) => record.id)).not.toContain(1);
  });

  it("rearranges by plugin id over the project's enabled configs of both families", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    // plugin 2's config (id 2) is disabled: ignored. Plugin 40 is the frontend app (config 4).
    const reply = await client.patch(`${CONFIGS}/rearrange`, {
      orders: { "1": 7, "2": 8, "40": 2, "77": 1 },
    });
    expect(reply.status).toBe(200);
    expect(list(reply.body).map((record) => [record.id, record.order])).toEqual([
      [4, 2],
      [3, 3],
      [1, 7],
    ]);
    expect(obj((await client.get(`${CONFIGS}/2`)).body).order).toBe(2);
    const bad = await client.patch(`${CONFIGS}/rearrange`, { orders: { abc: 1 } });
    expect(bad.status).toBe(500);
    expect(bad.body).toEqual(errorBody("server_error", "error", "A server error occurred."));
    expect((await client.patch(`${CONFIGS}/rearrange`, { orders: [1] })).status).toBe(500);
  });

  it("refuses scoped keys on rearrange, job and frontend, but not unscoped or * keys", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const refusal = errorBody(
      "authentication_error",
      "permission_denied",
      "This action does not support Personal API Key access",
    );
    for (const key of [READ_ONLY, WRITE_ONLY]) {
      expect((await client.patch(`${CONFIGS}/rearrange`, { orders: {} }, { key })).body).toEqual(refusal);
      expect((await client.post(`${CONFIGS}/1/job`, { job: { type: "x" } }, { key })).body).toEqual(refusal);
      expect((await client.get(`${CONFIGS}/1/frontend`, { key })).body).toEqual(refusal);
    }
    for (const key of [LEGACY, client.key]) {
      expect((await client.get(`${CONFIGS}/1/frontend`, { key })).status).toBe(200);
    }
    // Ordinary operations still follow scopes.
    expect((await client.get(CONFIGS, { key: READ_ONLY })).status).toBe(200);
  });

  it("ignores plugin on update", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const reply = await client.patch(`${CONFIGS}/1`, { plugin: 5, order: 4 });
    expect(obj(reply.body)).toMatchObject({ plugin: 1, order: 4 });
    // Not even validated: it is not a field of the update.
    expect((await client.patch(`${CONFIGS}/1`, { plugin: 99 })).status).toBe(200);
  });

  it("falls back to the plugin's name and description on output when they are null", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const record = obj((await client.post(CONFIGS, { plugin: 6, order: 4 })).body);
    expect(record).toMatchObject({
      name: "BigQuery Export",
      description: "Export events to a Google BigQuery table.",
    });
    // Stored as null: the seed profile shows the same data without the fallback.
    expect(client.emulator.snapshot().records.find((stored) => stored.id === record.id)).toMatchObject({
      name: null,
      description: null,
    });
  });

  it("sends plugin_info null in list and rearrange responses, the plugin's info in single records", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const listed = page((await client.get(CONFIGS)).body).results;
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.map((record) => record.plugin_info)).toEqual(listed.map(() => null));
    const rearranged = list((await client.patch(`${CONFIGS}/rearrange`, { orders: { "1": 7 } })).body);
    expect(rearranged.length).toBeGreaterThan(0);
    expect(rearranged.map((record) => record.plugin_info)).toEqual(rearranged.map(() => null));
    const geoip = { id: 1, name: "GeoIP", description: expect.any(String) };
    const pluginInfo = (record: unknown) => JSON.parse(String(obj(record).plugin_info));
    expect(pluginInfo((await client.get(`${CONFIGS}/1`)).body)).toEqual(geoip);
    expect(pluginInfo((await client.patch(`${CONFIGS}/1`, { order: 3 })).body)).toEqual(geoip);
    expect(pluginInfo((await client.post(CONFIGS, { plugin: 1, order: 9 })).body)).toEqual(geoip);
    // The seed profile keeps plugin_info everywhere.
    const seed = await startTestEmulator();
    expect(page((await seed.get(CONFIGS)).body).results.map(pluginInfo)).toContainEqual(geoip);
    expect(
      list((await seed.patch(`${CONFIGS}/rearrange`, { orders: { "1": 7 } })).body).map(pluginInfo),
    ).toContainEqual(geoip);
  });

  it("falls back to the plugin's name and description when they are empty strings too", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024" });
    const created = obj(
      (await client.post(CONFIGS, { plugin: 6, order: 4, name: "", description: "" })).body,
    );
    const plugin = { name: "BigQuery Export", description: "Export events to a Google BigQuery table." };
    expect(created).toMatchObject(plugin);
    const id = Number(created.id);
    expect(obj((await client.get(`${CONFIGS}/${id}`)).body)).toMatchObject(plugin);
    expect(page((await client.get(CONFIGS)).body).results.find((record) => record.id === id)).toMatchObject(
      plugin,
    );
    expect(obj((await client.patch(`${CONFIGS}/1`, { name: "" })).body).name).toBe("GeoIP");
    // Stored as sent: the fallback is only how the record is shown.
    expect(client.emulator.snapshot().records.find((stored) => stored.id === id)).toMatchObject({
      name: "",
      description: "",
    });
    // The seed profile shows them as stored.
    const seed = await startTestEmulator();
    expect(
      obj((await seed.post(CONFIGS, { plugin: 6, order: 4, name: "", description: "" })).body),
    ).toMatchObject({
      name: "",
      description: "",
    });
  });

  it("answers a job with 200 and an empty body, and still logs it", async () => {
    // Without the synthesized stream, whose entries after the job would come first.
    const client = await startTestEmulator({ profile: "posthog-2024", logRate: 0 });
    const reply = await client.post(`${CONFIGS}/1/job`, { job: { type: "Sync" } });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    const logs = page((await client.get(`${CONFIGS}/1/logs`)).body);
    expect(logs.results[0]).toMatchObject({ message: "Job Sync queued" });
  });
});
