// Record CRUD in the seed profile: the shapes, defaults, computed fields and validation errors a
// client sees.

import { describe, expect, it } from "vitest";
import { startTestEmulator } from "../support/emulator.js";
import { errorBody, obj, page } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs/";

describe("records (seed profile)", () => {
  it("lists the example records of a project, sorted by order, plugin, id", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(CONFIGS);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/json");
    const body = page(reply.body);
    expect(body.count).toBe(3);
    expect(body.next).toBeNull();
    expect(body.previous).toBeNull();
    expect(body.results.map((record) => [record.id, record.name, record.enabled, record.order])).toEqual([
      [1, "GeoIP", true, 1],
      [2, "Property Filter", false, 2],
      [3, "Legacy S3", true, 3],
    ]);
    const frontend = page((await client.get("/api/projects/1/pipeline_frontend_apps_configs")).body);
    expect(frontend.results.map((record) => record.name)).toEqual(["Notification Bar"]);
    expect(page((await client.get("/api/projects/3/plugin_configs")).body)).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
  });

  it("creates a record with defaults and computed fields", async () => {
    const client = await startTestEmulator();
    const reply = await client.post(CONFIGS, { plugin: 3, order: 4, unknown_field: "ignored", config: "x" });
    expect(reply.status).toBe(201);
    const record = obj(reply.body);
    expect(Object.keys(record)).toEqual([
      "id",
      "plugin",
      "enabled",
      "order",
      "config",
      "error",
      "team_id",
      "plugin_info",
      "delivery_rate_24h",
      "created_at",
      "updated_at",
      "name",
      "description",
      "deleted",
      "match_action",
    ]);
    expect(record).toMatchObject({
      id: 6,
      plugin: 3,
      enabled: false,
      order: 4,
      config: "{}",
      error: null,
      team_id: 1,
      name: null,
      description: null,
      deleted: false,
      match_action: null,
    });
    expect(JSON.parse(String(record.plugin_info))).toEqual({
      id: 3,
      name: "Taxonomy Standardizer",
      description: "Rename events to one naming convention.",
    });
    expect(String(record.created_at)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(record.updated_at).toBe(record.created_at);
    expect(obj((await client.get(`${CONFIGS}6`)).body)).toEqual(record);
  });

  it("allows duplicate (plugin, project) configs", async () => {
    const client = await startTestEmulator();
    const first = await client.post(CONFIGS, { plugin: 1, order: 9, name: "GeoIP again" });
    expect(first.status).toBe(201);
    expect(
      page((await client.get(CONFIGS)).body).results.filter((record) => record.plugin === 1),
    ).toHaveLength(2);
  });

  it("updates writable fields and moves updated_at on every write", async () => {
    const client = await startTestEmulator();
    const before = obj((await client.get(`${CONFIGS}2`)).body);
    const first = obj(
      (await client.patch(`${CONFIGS}2`, { enabled: true, name: "PF", description: "d", match_action: 7 }))
        .body,
    );
    expect(first).toMatchObject({ id: 2, enabled: true, name: "PF", description: "d", match_action: 7 });
    expect(first.created_at).toBe(before.created_at);
    expect(first.updated_at).not.toBe(before.updated_at);
    const second = obj((await client.patch(`${CONFIGS}2`, {})).body);
    expect(second.updated_at).not.toBe(first.updated_at);
    expect(Date.parse(String(second.updated_at))).toBeGreaterThan(Date.parse(String(first.updated_at)));
    const cleared = obj(
      (await client.patch(`${CONFIGS}2`, { name: null, match_action: null, plugin: 4 })).body,
    );
    expect(cleared).toMatchObject({ name: null, match_action: null, plugin: 4 });
  });

  it("soft-deletes: 204, gone from the list, still retrievable, deleted again is 204", async () => {
    const client = await startTestEmulator();
    const reply = await client.delete(`${CONFIGS}1/`);
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    expect(page((await client.get(CONFIGS)).body).results.map((record) => record.id)).toEqual([2, 3]);
    expect(obj((await client.get(`${CONFIGS}1`)).body)).toMatchObject({ deleted: true, enabled: false });
    expect((await client.delete(`${CONFIGS}1`)).status).toBe(204);
    expect((await client.delete(`${CONFIGS}999`)).body).toEqual(
      errorBody("invalid_request", "not_found", "Not found."),
    );
  });

  it("PATCH deleted: true forces enabled false and hides the record; deleted: false brings it back", async () => {
    const client = await startTestEmulator();
    const deleted = obj((await client.patch(`${CONFIGS}3`, { deleted: true, enabled: true })).body);
    expect(deleted).toMatchObject({ deleted: true, enabled: false });
    expect(page((await client.get(CONFIGS)).body).count).toBe(2);
    expect(obj((await client.patch(`${CONFIGS}3`, { deleted: false })).body)).toMatchObject({
      deleted: false,
    });
    expect(page((await client.get(CONFIGS)).body).count).toBe(3);
    const createdDeleted = obj(
      (await client.post(CONFIGS, { plugin: 1, order: 1, deleted: true, enabled: true })).body,
    );
    expect(createdDeleted).toMatchObject({ deleted: true, enabled: false });
  });

  it("keeps families disjoint: a record is only reachable through the family it was created in", async () => {
    const client = await startTestEmulator();
    expect((await client.get(`${CONFIGS}4`)).status).toBe(404);
    expect((await client.get("/api/projects/1/pipeline_frontend_apps_configs/1")).status).toBe(404);
    const created = obj(
      (await client.post("/api/projects/1/pipeline_frontend_apps_configs", { plugin: 41, order: 2 })).body,
    );
    expect(page((await client.get(CONFIGS)).body).results.map((record) => record.id)).not.toContain(
      created.id,
    );
    // Records of another project are not found through this one.
    expect((await client.get(`${CONFIGS}5`)).status).toBe(404);
  });

  it("does not change a record through a project it does not belong to", async () => {
    const client = await startTestEmulator();
    expect((await client.patch("/api/projects/2/plugin_configs/1", { name: "x" })).status).toBe(404);
    expect((await client.delete("/api/projects/2/plugin_configs/1")).status).toBe(404);
    expect(client.emulator.snapshot().records.find((record) => record.id === 1)?.name).toBe("GeoIP");
  });

  describe("validation errors", () => {
    const cases: [string, unknown, ReturnType<typeof errorBody>][] = [
      [
        "missing plugin",
        { order: 1 },
        errorBody("validation_error", "required", "This field is required.", "plugin"),
      ],
      [
        "missing order",
        { plugin: 1 },
        errorBody("validation_error", "required", "This field is required.", "order"),
      ],
      [
        "unknown plugin",
        { plugin: 99, order: 1 },
        errorBody("validation_error", "does_not_exist", 'Invalid pk "99" - object does not exist.', "plugin"),
      ],
      [
        "order not an integer",
        { plugin: 1, order: "first" },
        errorBody("validation_error", "invalid_input", "A valid integer is required.", "order"),
      ],
      [
        "fractional order",
        { plugin: 1, order: 1.5 },
        errorBody("validation_error", "invalid_input", "A valid integer is required.", "order"),
      ],
      [
        "plugin as a string",
        { plugin: "1", order: 1 },
        errorBody(
          "validation_error",
          "invalid_input",
          "Incorrect type. Expected pk value, received str.",
          "plugin",
        ),
      ],
      [
        "enabled not a boolean",
        { plugin: 1, order: 1, enabled: "yes" },
        errorBody("validation_error", "invalid_input", "Must be a valid boolean.", "enabled"),
      ],
      [
        "null order",
        { plugin: 1, order: null },
        errorBody("validation_error", "null", "This field may not be null.", "order"),
      ],
      [
        "null enabled",
        { plugin: 1, order: 1, enabled: null },
        errorBody("validation_error", "null", "This field may not be null.", "enabled"),
      ],
      [
        "name too long",
        { plugin: 1, order: 1, name: "n".repeat(401) },
        errorBody(
          "validation_error",
          "max_length",
          "Ensure this field has no more than 400 characters.",
          "name",
        ),
      ],
      [
        "description too long",
        { plugin: 1, order: 1, description: "d".repeat(1001) },
        errorBody(
          "validation_error",
          "max_length",
          "Ensure this field has no more than 1000 characters.",
          "description",
        ),
      ],
      [
        "name not a string",
        { plugin: 1, order: 1, name: 5 },
        errorBody("validation_error", "invalid_input", "Not a valid string.", "name"),
      ],
      [
        "order beyond 32 bits",
        { plugin: 1, order: 2 ** 31 },
        errorBody(
          "validation_error",
          "max_value",
          "Ensure this value is less than or equal to 2147483647.",
          "order",
        ),
      ],
      [
        "a list body",
        [1, 2],
        errorBody(
          "validation_error",
          "invalid_input",
          "Invalid data. Expected a dictionary, but got list.",
          null,
        ),
      ],
    ];
    it.each(cases)("create with %s is a 400", async (_name, body, expected) => {
      const client = await startTestEmulator();
      const reply = await client.post(CONFIGS, body);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(expected);
      expect(client.emulator.snapshot().records).toHaveLength(5);
    });

    it("accepts names and descriptions at their limits", async () => {
      const client = await startTestEmulator();
      const reply = await client.post(CONFIGS, {
        plugin: 1,
        order: 1,
        name: "n".repeat(400),
        description: "d".repeat(1000),
      });
      expect(reply.status).toBe(201);
    });

    it("validates updates the same way, without requiring anything", async () => {
      const client = await startTestEmulator();
      expect((await client.patch(`${CONFIGS}1`, { plugin: 99 })).body).toEqual(
        errorBody("validation_error", "does_not_exist", 'Invalid pk "99" - object does not exist.', "plugin"),
      );
      expect((await client.patch(`${CONFIGS}1`, { deleted: null })).body).toEqual(
        errorBody("validation_error", "null", "This field may not be null.", "deleted"),
      );
      expect((await client.patch(`${CONFIGS}1`, { plugin: null })).body).toEqual(
        errorBody("validation_error", "null", "This field may not be null.", "plugin"),
      );
    });

    it("answers a malformed JSON body with parse_error", async () => {
      const client = await startTestEmulator();
      const reply = await client.request("POST", CONFIGS, {
        rawBody: '{"plugin": 1,',
        headers: { "content-type": "application/json" },
      });
      expect(reply.status).toBe(400);
      expect(obj(reply.body)).toMatchObject({ type: "validation_error", code: "parse_error", attr: null });
      expect(String(obj(reply.body).detail)).toMatch(/^JSON parse error/);
    });

    it("refuses a body that is not JSON with 415", async () => {
      const client = await startTestEmulator();
      const reply = await client.request("POST", CONFIGS, {
        rawBody: "plugin=1&order=1",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(reply.status).toBe(415);
      expect(obj(reply.body)).toMatchObject({ type: "invalid_request", code: "unsupported_media_type" });
    });

    it("refuses a body over 1 MiB with 413 and changes nothing", async () => {
      const client = await startTestEmulator();
      const reply = await client.post(CONFIGS, { plugin: 1, order: 1, padding: "x".repeat(1024 * 1024) });
      expect(reply.status).toBe(413);
      expect(obj(reply.body)).toMatchObject({
        type: "invalid_request",
        code: "payload_too_large",
        attr: null,
      });
      expect(client.emulator.snapshot().records).toHaveLength(5);
    });
  });
});
