// Pagination edges on lists and logs, and the logs filters.

import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { type EmulatorData, exampleData } from "../../src/emulator/index.js";
import { startTestEmulator } from "../support/emulator.js";
import { storedRecord } from "../support/emulator-data.js";
import { errorBody, obj, page } from "../support/http-client.js";

/** Example data plus `extra` records in project 3, orders 1..extra. */
function dataWithRecords(extra: number): EmulatorData {
  const data = exampleData();
  for (let index = 1; index <= extra; index += 1) {
    data.records.push(
      storedRecord({
        id: data.nextIds.record,
        family: "plugin_configs",
        project: 3,
        plugin: 1 + (index % 8),
        order: index,
        name: `config ${index}`,
      }),
    );
    data.nextIds.record += 1;
  }
  return data;
}

const LIST = "/api/projects/3/plugin_configs/";

describe("pagination", () => {
  it("answers an empty list with one empty page", async () => {
    const client = await startTestEmulator();
    expect(page((await client.get(`${LIST}?limit=10`)).body)).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
  });

  it("returns exactly one page when the results fit the limit exactly", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(5) });
    const body = page((await client.get(`${LIST}?limit=5`)).body);
    expect(body.count).toBe(5);
    expect(body.results).toHaveLength(5);
    expect(body.next).toBeNull();
    expect(body.previous).toBeNull();
  });

  it("defaults to 100 per page and has no maximum", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(250) });
    const first = page((await client.get(LIST)).body);
    expect(first.count).toBe(250);
    expect(first.results).toHaveLength(100);
    expect(first.next).toBe(`${client.emulator.url}${LIST}?limit=100&offset=100`);
    const all = page((await client.get(`${LIST}?limit=1000`)).body);
    expect(all.results).toHaveLength(250);
    expect(all.next).toBeNull();
  });

  it("caps the page size when asked to, linking on with the capped limit", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(25), faults: { maxPageSize: 10 } });
    const first = page((await client.get(`${LIST}?limit=1000`)).body);
    expect(first.count).toBe(25);
    expect(first.results).toHaveLength(10);
    expect(first.next).toBe(`${client.emulator.url}${LIST}?limit=10&offset=10`);
    const small = page((await client.get(`${LIST}?limit=4&offset=20`)).body);
    expect(small.results.map((record) => record.order)).toEqual([21, 22, 23, 24]);
    expect(page((await client.get(LIST)).body).results).toHaveLength(10);
    expect((await client.get(`${LIST}?limit=x`)).status).toBe(400);
  });

  it("walks many pages with absolute links, previous omitting a zero offset", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(7) });
    const seen: unknown[] = [];
    let url: string | null = `${client.emulator.url}${LIST}?limit=3`;
    const pages = [];
    while (url !== null) {
      const body = page((await client.get(url.slice(client.emulator.url.length))).body);
      pages.push(body);
      seen.push(...body.results.map((record) => record.order));
      url = body.next;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(pages.map((body) => [body.next, body.previous])).toEqual([
      [`${client.emulator.url}${LIST}?limit=3&offset=3`, null],
      [`${client.emulator.url}${LIST}?limit=3&offset=6`, `${client.emulator.url}${LIST}?limit=3`],
      [null, `${client.emulator.url}${LIST}?limit=3&offset=3`],
    ]);
  });

  it("links previous from an offset below the limit to the first page", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(7) });
    const body = page((await client.get(`${LIST}?offset=2&limit=3`)).body);
    expect(body.results.map((record) => record.order)).toEqual([3, 4, 5]);
    expect(body.previous).toBe(`${client.emulator.url}${LIST}?limit=3`);
    expect(body.next).toBe(`${client.emulator.url}${LIST}?offset=5&limit=3`);
  });

  it("builds links from the Host the client used", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(3) });
    // fetch always sends its own Host, so this one request goes through node:http.
    const text = await new Promise<string>((resolve, reject) => {
      const request = httpRequest(
        `${client.emulator.url}${LIST}?limit=1`,
        { headers: { host: "pcsync.example:8443", authorization: `Bearer ${client.key}` } },
        (response) => {
          let data = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            data += chunk;
          });
          response.on("end", () => resolve(data));
        },
      );
      request.on("error", reject);
      request.end();
    });
    const body = page(JSON.parse(text));
    expect(body.next).toBe(`http://pcsync.example:8443${LIST}?limit=1&offset=1`);
  });

  it("returns an empty page past the end", async () => {
    const client = await startTestEmulator({ data: dataWithRecords(3) });
    const body = page((await client.get(`${LIST}?offset=10`)).body);
    expect(body).toMatchObject({ count: 3, next: null, results: [] });
  });

  it.each([
    ["limit=abc", "invalid_input", "A valid integer is required.", "limit"],
    ["limit=1.5", "invalid_input", "A valid integer is required.", "limit"],
    ["limit=", "invalid_input", "A valid integer is required.", "limit"],
    ["limit=-1", "min_value", "Ensure this value is greater than or equal to 1.", "limit"],
    ["limit=0", "min_value", "Ensure this value is greater than or equal to 1.", "limit"],
    ["offset=x", "invalid_input", "A valid integer is required.", "offset"],
    ["offset=-3", "min_value", "Ensure this value is greater than or equal to 0.", "offset"],
  ])("answers ?%s with 400", async (query, code, detail, attr) => {
    const client = await startTestEmulator();
    const reply = await client.get(`${LIST}?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(errorBody("validation_error", code, detail, attr));
  });
});

const LOGS = "/api/projects/1/plugin_configs/1/logs/";

// These check the stored entries of the example data; log-stream.test.ts checks the synthesized ones.
describe("logs", () => {
  it("lists a config's log entries newest first", async () => {
    const client = await startTestEmulator({ logRate: 0 });
    const body = page((await client.get(LOGS)).body);
    expect(body.count).toBe(6);
    const timestamps = body.results.map((entry) => String(entry.timestamp));
    expect(timestamps).toEqual([...timestamps].sort().reverse());
    expect(body.results[0]).toEqual({
      id: "018fd5a0-0000-7000-8000-000000000006",
      team_id: 1,
      plugin_id: 1,
      plugin_config_id: 1,
      timestamp: "2024-06-01T11:00:00.000Z",
      source: "SYSTEM",
      type: "INFO",
      message: "Plugin reloaded after config change.",
      instance_id: "018fd5a0-1111-7000-8000-000000000001",
    });
  });

  it("filters by repeated type_filter, search, after and before", async () => {
    const client = await startTestEmulator({ logRate: 0 });
    const types = page((await client.get(`${LOGS}?type_filter=WARN&type_filter=ERROR`)).body);
    expect(types.results.map((entry) => entry.type)).toEqual(["ERROR", "WARN"]);
    const search = page((await client.get(`${LOGS}?search=203.0.113.7`)).body);
    expect(search.results.map((entry) => entry.type)).toEqual(["LOG", "DEBUG"]);
    const window = page(
      (await client.get(`${LOGS}?after=2024-05-31T20:00:00Z&before=2024-06-01T08:00:00Z`)).body,
    );
    expect(window.results.map((entry) => entry.timestamp)).toEqual([
      "2024-06-01T07:30:00.000Z",
      "2024-06-01T03:00:00.000Z",
      "2024-05-31T21:45:00.000Z",
    ]);
    const paged = page((await client.get(`${LOGS}?type_filter=INFO&limit=1`)).body);
    expect(paged.count).toBe(2);
    expect(paged.next).toBe(`${client.emulator.url}${LOGS}?type_filter=INFO&limit=1&offset=1`);
  });

  it("rejects an unreadable date filter", async () => {
    const client = await startTestEmulator();
    expect((await client.get(`${LOGS}?after=yesterday`)).body).toEqual(
      errorBody("validation_error", "invalid_input", "Enter a valid date/time.", "after"),
    );
  });

  it("gives an empty page for an unknown config id", async () => {
    const client = await startTestEmulator();
    expect(page((await client.get("/api/projects/1/plugin_configs/999/logs")).body)).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    // The logs of project 1's config are not visible through project 2.
    expect(page((await client.get("/api/projects/2/plugin_configs/1/logs")).body).count).toBe(0);
  });

  it("shows a queued job as a new log entry", async () => {
    const client = await startTestEmulator({ logRate: 0 });
    expect(
      (await client.post("/api/projects/1/plugin_configs/1/job", { job: { type: "Export", payload: {} } }))
        .status,
    ).toBe(200);
    const newest = obj(page((await client.get(LOGS)).body).results[0]);
    expect(newest).toMatchObject({
      message: "Job Export queued",
      type: "INFO",
      source: "SYSTEM",
      plugin_config_id: 1,
    });
  });
});
