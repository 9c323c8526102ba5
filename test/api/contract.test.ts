import { createRecord } from "../support/builders.js";
// The client against the project's emulator, on both server profiles: every endpoint, every error
// the service documents, pagination edges, throttling and a dropped create.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ApiClient,
  type ApiClientOptions,
  createJob,
  deleteConfig,
  getConfig,
  getFrontend,
  listAllConfigs,
  listLogs,
  listProjects,
  paginate,
  rearrangeConfigs,
  type ServiceError,
  updateConfig,
} from "../../src/api/index.js";
import { type ProfileName, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";

const FULL_KEY = "phx_contract_full_0123456789";
const READ_KEY = "phx_contract_read_0123456789";
const PROJECT_2_KEY = "phx_contract_p2_0123456789";
const LEGACY_KEY = "phx_contract_legacy_0123456789";

const KEYS = [
  { key: FULL_KEY, scopes: ["*"], projects: "*" as const },
  { key: READ_KEY, scopes: ["plugin:read"], projects: "*" as const },
  { key: PROJECT_2_KEY, scopes: ["*"], projects: [2] },
  { key: LEGACY_KEY, scopes: null, projects: "*" as const },
];

let emulator: RunningEmulator;
const clients: ApiClient[] = [];
let sleeps: number[] = [];

function clientWith(overrides: Partial<ApiClientOptions> = {}): ApiClient {
  const client = new ApiClient({
    baseUrl: emulator.url,
    apiKey: FULL_KEY,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: "api_error" });
  return error as ServiceError;
}

describe.each(["seed", "posthog-2024"] as const satisfies readonly ProfileName[])(
  "against the %s profile",
  (profile) => {
    const posthog = profile === "posthog-2024";

    beforeEach(async () => {
      sleeps = [];
      // logRate 0: the logs contract is checked on the stored entries alone.
      emulator = await startEmulator({ port: 0, profile, keys: KEYS, logRate: 0 });
    });

    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
      await emulator.close();
    });

    it("lists projects and each family", async () => {
      const client = clientWith();
      expect((await listProjects(client)).map((project) => project.id)).toEqual([1, 2, 3]);
      const plugins = await listAllConfigs(client, "1", "plugin_configs");
      // posthog-2024's plugin_configs also shows the frontend apps.
      expect(plugins.map((record) => record.id)).toEqual(posthog ? [1, 4, 2, 3] : [1, 2, 3]);
      const apps = await listAllConfigs(client, "@current", "pipeline_frontend_apps_configs");
      expect(apps.map((record) => record.name)).toEqual(["Notification Bar"]);
    });

    it("creates, reads, updates and deletes a record", async () => {
      const client = clientWith();
      const created = await createRecord(
        client,
        "1",
        "plugin_configs",
        { plugin: 3, order: 4, name: "Taxonomy", enabled: false },
        { knownIds: new Set([1, 2, 3, 4]) },
      );
      expect(created).toMatchObject({
        plugin: 3,
        order: 4,
        name: "Taxonomy",
        enabled: false,
        deleted: false,
      });
      expect(await getConfig(client, "1", "plugin_configs", created.id)).toMatchObject({ id: created.id });
      const updated = await updateConfig(client, "1", "plugin_configs", created.id, {
        enabled: true,
        description: "d",
      });
      expect(updated).toMatchObject({ enabled: true, description: "d" });

      await deleteConfig(client, "1", "plugin_configs", created.id);
      const afterDelete = await getConfig(client, "1", "plugin_configs", created.id);
      expect(afterDelete.enabled).toBe(false);
      const listed = (await listAllConfigs(client, "1", "plugin_configs")).map((record) => record.id);
      // posthog-2024's DELETE only disables; leaving the list takes deleted: true.
      expect(listed.includes(created.id)).toBe(posthog);
      if (posthog) {
        await updateConfig(client, "1", "plugin_configs", created.id, { deleted: true });
        expect(
          (await listAllConfigs(client, "1", "plugin_configs")).map((record) => record.id),
        ).not.toContain(created.id);
      }
    });

    it("reads the frontend module, runs a job and rearranges", async () => {
      const client = clientWith();
      expect(await getFrontend(client, "1", "pipeline_frontend_apps_configs", 4)).toContain("getFrontendApp");
      const job = await createJob(client, "1", "plugin_configs", 1, { type: "Export", payload: { from: 1 } });
      if (posthog) expect(job).toBeNull();
      else expect(job).toMatchObject({ id: 1 });

      // seed keys rearrange by config id, posthog-2024 by plugin id (of enabled configs).
      const orders = posthog ? { "1": 7, "5": 8 } : { "1": 7, "3": 8 };
      const records = await rearrangeConfigs(client, "1", "plugin_configs", orders);
      expect(Array.isArray(records)).toBe(true);
      const byId = new Map(records.map((record) => [record.id, record.order]));
      expect(byId.get(1)).toBe(7);
      expect(byId.get(3)).toBe(8);
    });

    it("lists filtered log entries of a plugin config", async () => {
      const client = clientWith();
      const logs = await listLogs(client, "1", "plugin_configs", 1, {
        typeFilter: ["ERROR", "WARN"],
        limit: 10,
      });
      expect(logs.results.map((entry) => entry.type)).toEqual(["ERROR", "WARN"]);
      const searched = await listLogs(client, "1", "plugin_configs", 1, { search: "Amsterdam" });
      expect(searched.count).toBe(1);
    });

    it("reports validation errors with the service's code and field", async () => {
      const client = clientWith();
      const options = { knownIds: new Set<number>() };
      const required = await failure(createRecord(client, "1", "plugin_configs", { order: 1 }, options));
      expect(required.serviceError).toMatchObject({
        type: "validation_error",
        code: "required",
        attr: "plugin",
      });
      expect(required.message).toBe(
        "400 POST /api/projects/1/plugin_configs/: plugin: This field is required.",
      );

      const invalid = await failure(
        updateConfig(client, "1", "plugin_configs", 1, { enabled: "yes" as unknown as boolean }),
      );
      expect(invalid.serviceError).toMatchObject({ code: "invalid_input", attr: "enabled" });

      const missing = await failure(
        createRecord(client, "1", "plugin_configs", { plugin: 99, order: 1 }, options),
      );
      expect(missing.message).toBe(
        '400 POST /api/projects/1/plugin_configs/: plugin: Invalid pk "99" - object does not exist.',
      );
    });

    it("reports authentication, permission and not-found errors", async () => {
      const wrongKey = await failure(
        listAllConfigs(clientWith({ apiKey: "phx_not_a_key_000" }), "1", "plugin_configs"),
      );
      expect(wrongKey.status).toBe(401);
      expect(wrongKey.message).not.toContain("phx_not_a_key_000");

      const readOnly = await failure(
        createRecord(
          clientWith({ apiKey: READ_KEY }),
          "1",
          "plugin_configs",
          { plugin: 1, order: 9 },
          { knownIds: new Set() },
        ),
      );
      expect(readOnly.status).toBe(403);
      expect(readOnly.serviceError?.detail).toBe("API key missing required scope 'plugin:write'");

      const otherProject = await failure(
        listAllConfigs(clientWith({ apiKey: PROJECT_2_KEY }), "1", "plugin_configs"),
      );
      expect(otherProject.status).toBe(403);
      expect(otherProject.serviceError?.detail).toBe(
        "API key does not have access to the requested project '1'",
      );

      const notFound = await failure(getConfig(clientWith(), "1", "plugin_configs", 999));
      expect(notFound).toMatchObject({ status: 404, serviceError: { code: "not_found" } });
    });

    it("reports what the profile does on DELETE of an unknown id", async () => {
      const error = await failure(deleteConfig(clientWith(), "1", "plugin_configs", 999));
      expect(error.status).toBe(posthog ? 500 : 404);
      // A 500 is not a transient status: it is not retried.
      expect(error.attempts).toBe(1);
    });

    if (posthog) {
      it("refuses scoped keys on frontend, job and rearrange, but not unscoped legacy keys", async () => {
        const scoped = clientWith({ apiKey: READ_KEY });
        const refused = await failure(getFrontend(scoped, "1", "pipeline_frontend_apps_configs", 4));
        expect(refused.status).toBe(403);
        const legacy = clientWith({ apiKey: LEGACY_KEY });
        expect(await getFrontend(legacy, "1", "pipeline_frontend_apps_configs", 4)).toContain(
          "getFrontendApp",
        );
      });
    }

    it("pages: empty family, exactly one page, many small pages", async () => {
      const oneRequest = clientWith({ pageSize: 3 });
      expect(await listAllConfigs(oneRequest, "3", "plugin_configs")).toEqual([]);
      const seedFamily = await listAllConfigs(oneRequest, "1", "pipeline_frontend_apps_configs");
      expect(seedFamily).toHaveLength(1);
      expect(oneRequest.stats.requests).toBe(2);

      const exact = clientWith({ pageSize: posthog ? 4 : 3 });
      expect(await listAllConfigs(exact, "1", "plugin_configs")).toHaveLength(posthog ? 4 : 3);
      expect(exact.stats.requests).toBe(1);

      const small = clientWith({ pageSize: 1 });
      const pages = [];
      for await (const page of paginate(
        small,
        small.url("/api/projects/1/plugin_configs/", { limit: 1 }),
        "recordPage",
      )) {
        pages.push(page);
      }
      expect(pages).toHaveLength(posthog ? 4 : 3);
      expect(pages.flatMap((page) => page.results.map((record) => record.id))).toEqual(
        posthog ? [1, 4, 2, 3] : [1, 2, 3],
      );
      expect(pages[0]?.previous).toBeNull();
      // The link back to the first page leaves out offset=0.
      expect(pages[1]?.previous).not.toContain("offset");
      expect(pages.at(-1)?.next).toBeNull();
    });

    it("retries a 429 and waits what the service says", async () => {
      emulator.setFaults({ fail429Rate: 0.5, seed: 7 });
      const trace: string[] = [];
      const client = clientWith({ retry: { retries: 10 }, trace: (line) => trace.push(line) });
      for (let index = 0; index < 5; index += 1) await getConfig(client, "1", "plugin_configs", 1);
      expect(client.stats.throttled).toBeGreaterThan(0);
      // posthog-2024 sends no Retry-After: the wait comes from "Expected available in 1 second."
      const waits = trace.filter((line) => line.includes("throttled; retry"));
      expect(waits).toHaveLength(client.stats.throttled);
      for (const line of waits) expect(line).toMatch(/in 1000 ms$/);
      // Everyone waits the service's time: the limiter slept before the next start.
      expect(sleeps.some((ms) => ms > 900)).toBe(true);
    });

    it("reports a 429 when the retries run out", async () => {
      emulator.setFaults({ fail429Rate: 1 });
      const error = await failure(getConfig(clientWith({ retry: { retries: 1 } }), "1", "plugin_configs", 1));
      expect(error.status).toBe(429);
      expect(error.message).toContain("Expected available in 1 second");
    });

    it("leaves exactly one record when the create response is dropped", async () => {
      const client = clientWith();
      emulator.setFaults({ dropWriteRate: 1 });
      const created = await createRecord(client, "1", "plugin_configs", {
        plugin: 7,
        order: 5,
        name: "First Time",
      });
      emulator.setFaults({ dropWriteRate: 0 });
      const named = (await listAllConfigs(client, "1", "plugin_configs")).filter(
        (record) => record.name === "First Time",
      );
      expect(named).toEqual([expect.objectContaining({ id: created.id, plugin: 7 })]);
      const posts = emulator.requestLog.filter((entry) => entry.method === "POST");
      expect(posts.map((entry) => entry.status)).toEqual([0]);
    });

    it("retries 503s on reads and a dropped PATCH", async () => {
      emulator.setFaults({ fail503Rate: 0.5, seed: 3 });
      const client = clientWith({ retry: { retries: 10 } });
      await listAllConfigs(client, "1", "plugin_configs");
      emulator.setFaults({ dropWriteRate: 1, seed: 1 });
      const patching = updateConfig(clientWith({ retry: { retries: 1 } }), "1", "plugin_configs", 2, {
        enabled: true,
      });
      await expect(patching).rejects.toMatchObject({
        code: "network_error",
        outcomeUnknown: true,
        attempts: 2,
      });
      emulator.setFaults({});
      expect((await getConfig(client, "1", "plugin_configs", 2)).enabled).toBe(true);
    });
  },
);
