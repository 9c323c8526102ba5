import { createRecord } from "../support/builders.js";
// Integer ids at the response-validation edge: anything but a safe positive integer (1 to 2^53 - 1)
// is refused, naming the endpoint and the field. The bodies go out as raw JSON text, since a number
// past 2^53 is already rounded by the time JSON.parse hands it over.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getConfig,
  listAllConfigs,
  listLogs,
  listProjects,
  rearrangeConfigs,
  type ServiceError,
} from "../../src/api/index.js";
import { type ScriptedServer, startScriptedServer, testClient } from "../support/scripted-server.js";

let server: ScriptedServer;
// Raw response text by path; each test sets the one it needs under a path of its own.
const bodies = new Map<string, string>();
const clients: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  server = await startScriptedServer((request, response) => {
    const path = new URL(request.url, server.url).pathname;
    const body = bodies.get(`${request.method} ${path}`) ?? "{}";
    response.writeHead(request.method === "POST" ? 201 : 200, { "content-type": "application/json" });
    response.end(body);
  });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await server.close();
});

/** A record as raw JSON text; each field's value is given as the JSON text to send. */
function recordText(overrides: Record<string, string> = {}): string {
  const fields: Record<string, string> = {
    id: "1",
    plugin: "12",
    enabled: "true",
    order: "1",
    name: '"a"',
    description: "null",
    deleted: "false",
    match_action: "null",
    ...overrides,
  };
  return `{${Object.entries(fields)
    .map(([name, raw]) => `"${name}": ${raw}`)
    .join(", ")}}`;
}

async function refusal(read: () => Promise<unknown>): Promise<ServiceError<"malformed_response">> {
  const error = await read().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: "malformed_response" });
  return error as ServiceError<"malformed_response">;
}

describe("ids that are not safe positive integers are refused", () => {
  const client = () => {
    const made = testClient(server.url, { retry: { retries: 0 } });
    clients.push(made.client);
    return made.client;
  };

  it.each([
    ["9007199254740993", /results\[0\]\.id: is larger than 9007199254740991 \(2\^53 - 1\)/],
    ["9007199254740992", /results\[0\]\.id: is larger than 9007199254740991/],
    ["1e300", /results\[0\]\.id: is larger than 9007199254740991/],
    ["0", /results\[0\]\.id: must be a positive integer id, not 0/],
    ["-1", /results\[0\]\.id: must be a positive integer id, not -1/],
    ["1.5", /results\[0\]\.id: must be integer/],
  ])("a listed record id of %s, naming the endpoint and field", async (idText, problem) => {
    const path = `/api/projects/${idText.replace(/\W/g, "_")}/plugin_configs/`;
    bodies.set(`GET ${path}`, `{"count": 1, "next": null, "results": [${recordText({ id: idText })}]}`);
    const error = await refusal(() => listAllConfigs(client(), idText.replace(/\W/g, "_"), "plugin_configs"));
    expect(error.message).toMatch(new RegExp(`^GET ${path.replace(/\//g, "\\/")}: malformed response: `));
    expect(error.facts.problem).toMatch(problem);
  });

  it("two records whose ids differ only past 2^53 are never read as one", async () => {
    bodies.set(
      "GET /api/projects/twins/plugin_configs/",
      `{"count": 2, "next": null, "results": [${recordText({ id: "9007199254740993" })}, ${recordText({ id: "9007199254740992" })}]}`,
    );
    const error = await refusal(() => listAllConfigs(client(), "twins", "plugin_configs"));
    expect(error.facts.problem).toMatch(/^results\[0\]\.id: is larger than/);
  });

  it("accepts the largest safe id and the smallest", async () => {
    bodies.set(
      "GET /api/projects/edges/plugin_configs/",
      `{"count": 2, "next": null, "results": [${recordText({ id: "9007199254740991", team_id: "9007199254740991", plugin: "9007199254740991" })}, ${recordText({ match_action: "1", plugin: "1" })}]}`,
    );
    const records = await listAllConfigs(client(), "edges", "plugin_configs");
    expect(records.map((record) => record.id)).toEqual([Number.MAX_SAFE_INTEGER, 1]);
  });

  it.each([
    ["plugin", "0", /^plugin: must be a positive integer id, not 0$/],
    ["plugin", "9007199254740993", /^plugin: is larger than 9007199254740991/],
    ["team_id", "-1", /^team_id: must be a positive integer id, not -1$/],
    ["team_id", "9007199254740992", /^team_id: is larger than/],
    ["team_id", '"1"', /^team_id: must be integer$/],
    ["match_action", "0", /^match_action: must be a positive integer id, not 0$/],
    ["match_action", "2.5", /^match_action: must be integer,null$/],
    ["order", "9007199254740993", /^order: is larger than/],
    ["order", "-9007199254740993", /^order: is smaller than/],
  ])("a record's %s of %s on retrieve", async (field, value, problem) => {
    bodies.set("GET /api/projects/1/plugin_configs/5/", recordText({ id: "5", [field]: value }));
    const error = await refusal(() => getConfig(client(), "1", "plugin_configs", 5));
    expect(error.message).toMatch(/^GET \/api\/projects\/1\/plugin_configs\/5\/: malformed response: /);
    expect(error.facts.problem).toMatch(problem);
  });

  it("a created record's id, naming POST", async () => {
    bodies.set(
      "POST /api/projects/1/pipeline_frontend_apps_configs/",
      recordText({ id: "9007199254740993" }),
    );
    // The answer is refused; since the service did answer the POST, one re-read of the family
    // settles it, and without the record there the outcome is unknown (never resent).
    const error = await createRecord(
      client(),
      "1",
      "pipeline_frontend_apps_configs",
      { plugin: 12, order: 1 },
      { knownIds: new Set() },
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as Error).message).toMatch(
      /^POST \/api\/projects\/1\/pipeline_frontend_apps_configs\/: malformed response: id: is larger than/,
    );
  });

  it("a rearranged record's id, naming PATCH", async () => {
    bodies.set(
      "PATCH /api/projects/1/plugin_configs/rearrange/",
      `[${recordText()}, ${recordText({ id: "0" })}]`,
    );
    const error = await refusal(() => rearrangeConfigs(client(), "1", "plugin_configs", { "1": 1 }));
    expect(error.message).toMatch(
      /^PATCH \/api\/projects\/1\/plugin_configs\/rearrange\/: malformed response: \[1\]\.id: must be a positive integer id, not 0/,
    );
  });

  it.each([
    ["9007199254740993", /^results\[0\]\.id: is larger than/],
    ["0", /^results\[0\]\.id: must be a positive integer id, not 0$/],
    ['" "', /^results\[0\]\.id: " " is not a plain project id/],
    [
      '"../2"',
      /^results\[0\]\.id: "\.\.\/2" is not a plain project id \(a positive integer\); no request is made/,
    ],
    ['"2/plugin_configs"', /^results\[0\]\.id: "2\/plugin_configs" is not a plain project id/],
    ['"02"', /^results\[0\]\.id: "02" is not a plain project id/],
    ['"%2e%2e"', /^results\[0\]\.id: "%2e%2e" is not a plain project id/],
    ['"\u0662"', /^results\[0\]\.id: "٢" is not a plain project id/],
    ['"12345678901234567"', /^results\[0\]\.id: "12345678901234567" is not a plain project id/],
  ])("a project id of %s", async (idText, problem) => {
    bodies.set(
      "GET /api/projects/",
      `{"count": 1, "next": null, "results": [{"id": ${idText}, "name": "p"}]}`,
    );
    const error = await refusal(() => listProjects(client()));
    expect(error.message).toMatch(/^GET \/api\/projects\/: malformed response: /);
    expect(error.facts.problem).toMatch(problem);
  });

  it.each([
    ["plugin_config_id", "9007199254740992"],
    ["plugin_id", "0"],
    ["team_id", "-1"],
  ])("a log entry's %s of %s", async (field, value) => {
    const entry: Record<string, string> = {
      id: '"e1"',
      team_id: "1",
      plugin_id: "12",
      plugin_config_id: "3",
      timestamp: '"2024-06-01T00:00:00Z"',
      source: '"PLUGIN"',
      type: '"INFO"',
      message: '"m"',
      instance_id: "null",
      [field]: value,
    };
    const text = Object.entries(entry)
      .map(([name, raw]) => `"${name}": ${raw}`)
      .join(", ");
    bodies.set(
      "GET /api/projects/1/plugin_configs/3/logs/",
      `{"count": 1, "next": null, "results": [{${text}}]}`,
    );
    const error = await refusal(() => listLogs(client(), "1", "plugin_configs", 3));
    expect(error.message).toMatch(/^GET \/api\/projects\/1\/plugin_configs\/3\/logs\/: malformed response: /);
    expect(error.facts.problem).toMatch(new RegExp(`^results\\[0\\]\\.${field}: `));
  });
});
