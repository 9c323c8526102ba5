// Authentication, scopes, project access and routing: every 401/403/404/405 a client can meet.

import { describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import {
  ALL_ACCESS,
  LEGACY,
  NO_SCOPES,
  PROJECT_2_ONLY,
  READ_ONLY,
  startTestEmulator,
  WRITE_ONLY,
} from "../support/emulator.js";
import { errorBody, obj, page } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs";

describe("authentication", () => {
  it("answers a request without credentials with 401 not_authenticated", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(CONFIGS, { key: null });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(
      errorBody("authentication_error", "not_authenticated", "Authentication credentials were not provided."),
    );
    const basic = await client.get(CONFIGS, { key: null, headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(obj(basic.body).code).toBe("not_authenticated");
  });

  it("answers an unknown key with 401 authentication_failed", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(CONFIGS, { key: "nope" });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(
      errorBody(
        "authentication_error",
        "authentication_failed",
        "Personal API key found in request Authorization header is invalid.",
      ),
    );
  });

  it("generates a development key when no key exists, and only then", async () => {
    const emulator = await startEmulator();
    try {
      expect(emulator.devKey).toMatch(/^phx_dev_[0-9a-f]{40}$/);
      const reply = await fetch(`${emulator.url}/api/projects/`, {
        headers: { authorization: `Bearer ${emulator.devKey}` },
      });
      expect(page(await reply.json()).results).toEqual([
        { id: 1, name: "Web" },
        { id: 2, name: "Mobile" },
        { id: 3, name: "Staging" },
      ]);
    } finally {
      await emulator.close();
    }
    const withKeys = await startEmulator({ keys: [{ key: "mine", scopes: null, projects: "*" }] });
    expect(withKeys.devKey).toBeUndefined();
    await withKeys.close();
  });
});

describe("scopes", () => {
  it("needs plugin:read to read and plugin:write to write", async () => {
    const client = await startTestEmulator();
    expect((await client.get(CONFIGS, { key: READ_ONLY })).status).toBe(200);
    expect((await client.get(`${CONFIGS}/1/logs`, { key: READ_ONLY })).status).toBe(200);
    expect((await client.get(`${CONFIGS}/1/frontend`, { key: READ_ONLY })).status).toBe(200);
    const refused = await client.post(CONFIGS, { plugin: 1, order: 1 }, { key: READ_ONLY });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(
      errorBody("authentication_error", "permission_denied", "API key missing required scope 'plugin:write'"),
    );
    for (const [method, path, body] of [
      ["PATCH", `${CONFIGS}/1`, {}],
      ["DELETE", `${CONFIGS}/1`, undefined],
      ["PATCH", `${CONFIGS}/rearrange`, { orders: {} }],
      ["POST", `${CONFIGS}/1/job`, { job: { type: "x" } }],
    ] as const) {
      const reply = await client.request(method, path, { key: READ_ONLY, body });
      expect([method, path, reply.status]).toEqual([method, path, 403]);
    }
    expect(client.emulator.snapshot().records.find((record) => record.id === 1)?.deleted).toBe(false);
  });

  it("lets plugin:write read too, and * and unscoped keys do everything", async () => {
    const client = await startTestEmulator();
    for (const key of [WRITE_ONLY, ALL_ACCESS, LEGACY]) {
      expect((await client.get(CONFIGS, { key })).status).toBe(200);
      expect((await client.post(CONFIGS, { plugin: 1, order: 1 }, { key })).status).toBe(201);
    }
  });

  it("refuses a key with an empty scope list", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(CONFIGS, { key: NO_SCOPES });
    expect(reply.body).toEqual(
      errorBody("authentication_error", "permission_denied", "API key missing required scope 'plugin:read'"),
    );
  });
});

describe("projects", () => {
  it("lists only the projects a key can see, and @current is the first of them", async () => {
    const client = await startTestEmulator();
    expect(page((await client.get("/api/projects/", { key: PROJECT_2_ONLY })).body).results).toEqual([
      { id: 2, name: "Mobile" },
    ]);
    expect((await client.get("/api/projects/@current/", { key: PROJECT_2_ONLY })).body).toEqual({
      id: 2,
      name: "Mobile",
    });
    const current = page(
      (await client.get("/api/projects/@current/plugin_configs/", { key: PROJECT_2_ONLY })).body,
    );
    expect(current.results.map((record) => record.team_id)).toEqual([2]);
    expect(obj((await client.get("/api/projects/@current")).body).id).toBe(1);
  });

  it("refuses a project the key has no access to with 403", async () => {
    const client = await startTestEmulator();
    const reply = await client.get(CONFIGS, { key: PROJECT_2_ONLY });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual(
      errorBody(
        "authentication_error",
        "permission_denied",
        "API key does not have access to the requested project '1'",
      ),
    );
  });

  it.each([
    "/api/projects/99/plugin_configs/",
    "/api/projects/abc/plugin_configs/",
    "/api/projects/1.0/plugin_configs/",
    "/api/projects/01/plugin_configs/",
    "/api/projects/-1/plugin_configs/",
    "/api/projects/1%2F..%2F2/plugin_configs/",
    "/api/projects/%31/plugin_configs/",
    "/api/projects/..%2f..%2fetc/plugin_configs/",
    "/api/projects/99/",
  ])("answers %s with 404 Project not found.", async (path) => {
    const client = await startTestEmulator();
    const reply = await client.get(path);
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual(errorBody("invalid_request", "not_found", "Project not found."));
  });
});

describe("routing", () => {
  it("accepts every path with or without a trailing slash", async () => {
    const client = await startTestEmulator();
    for (const path of [
      "/api/projects",
      "/api/projects/1",
      CONFIGS,
      `${CONFIGS}/1`,
      `${CONFIGS}/1/frontend`,
      `${CONFIGS}/1/logs`,
      "/api/projects/1/pipeline_frontend_apps_configs",
      "/api/projects/1/pipeline_frontend_apps_configs/4",
    ]) {
      expect([path, (await client.get(path)).status]).toEqual([path, 200]);
      expect([`${path}/`, (await client.get(`${path}/`)).status]).toEqual([`${path}/`, 200]);
    }
  });

  it.each([
    "/",
    "/api",
    "/api/projects/1/unknown_family/",
    "/api/projects/1/plugin_configs/1/unknown/",
    "/api/projects/1/pipeline_frontend_apps_configs/4/logs/",
    "/api//projects/1/plugin_configs/",
    "/api/projects/1/plugin_configs//",
  ])("answers the unknown route %s with 404 Not found. (even without a key)", async (path) => {
    const client = await startTestEmulator();
    const reply = await client.get(path, { key: null });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
  });

  it("answers an unknown or non-numeric record id with 404 Not found.", async () => {
    const client = await startTestEmulator();
    for (const path of [`${CONFIGS}/999`, `${CONFIGS}/abc`, `${CONFIGS}/1.5`, `${CONFIGS}/999/frontend`]) {
      expect((await client.get(path)).body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
    }
    expect((await client.patch(`${CONFIGS}/999`, { name: "x" })).status).toBe(404);
    expect((await client.post(`${CONFIGS}/999/job`, { job: { type: "x" } })).status).toBe(404);
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const client = await startTestEmulator();
    const reply = await client.request("PUT", `${CONFIGS}/1`, { body: { plugin: 1 } });
    expect(reply.status).toBe(405);
    expect(reply.headers.get("allow")).toBe("GET, PATCH, DELETE");
    expect(reply.body).toEqual(
      errorBody("invalid_request", "method_not_allowed", 'Method "PUT" not allowed.'),
    );
    expect((await client.get(`${CONFIGS}/rearrange`)).status).toBe(405);
    expect((await client.request("DELETE", CONFIGS)).status).toBe(405);
    // Authentication comes first, as in the real service.
    expect((await client.request("PUT", `${CONFIGS}/1`, { key: null })).status).toBe(401);
  });

  it("records every request in the request log", async () => {
    const client = await startTestEmulator();
    await client.get(`${CONFIGS}?limit=1`);
    await client.get(CONFIGS, { key: null });
    expect(client.emulator.requestLog).toEqual([
      { method: "GET", path: `${CONFIGS}?limit=1`, status: 200, hadAuth: true },
      { method: "GET", path: CONFIGS, status: 401, hadAuth: false },
    ]);
    client.emulator.resetRequestLog();
    expect(client.emulator.requestLog).toEqual([]);
  });

  it("writes a request log line when asked", async () => {
    const lines: string[] = [];
    const client = await startTestEmulator({ log: (line) => lines.push(line) });
    await client.get(CONFIGS);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/api\/projects\/1\/plugin_configs 200 \d+ms$/);
  });
});
