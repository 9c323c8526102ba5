// A hostile or broken server, end to end: the CLI's plan and apply (in-process) against a scripted
// node:http service that misbehaves in one way each. Every case ends with exit 1, one clear line on
// stderr and no stack trace; apply also says what it did and did not do, and the key never leaves
// for another origin.

import type { ServerResponse } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { type InProcessRun, runCliInProcess } from "../support/in-process.js";
import { withoutOutcomeLines } from "../support/output-checks.js";
import { KEY } from "../support/scenario.js";
import {
  page,
  type RecordedRequest,
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
} from "../support/scripted-server.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const MANIFEST = `version: 1
projects:
  "1":
    plugin_configs:
      prune: true
      configs:
        - name: GeoIP
          plugin: 1
          enabled: false
        - name: New
          plugin: 3
`;

const LIST = /^\/api\/projects\/1\/plugin_configs\/(\?.*)?$/;
const FRONTEND_LIST = /^\/api\/projects\/1\/pipeline_frontend_apps_configs\/(\?.*)?$/;
const ONE = /^\/api\/projects\/1\/plugin_configs\/(\d+)\/$/;

type Fault = (
  request: RecordedRequest,
  response: ServerResponse,
  records: ReturnType<typeof record>[],
) => boolean;

/**
 * A service that works (GeoIP to update, "Old" to prune, "New" to create) except where `fault`
 * answers instead: the fault returns true when it took the request.
 */
function serviceWith(fault: Fault) {
  const records = [
    record(1, { name: "GeoIP", plugin: 1, order: 1, enabled: true }),
    record(2, { name: "Old", plugin: 2, order: 2, enabled: true }),
  ];
  return (request: RecordedRequest, response: ServerResponse) => {
    if (fault(request, response, records)) return;
    const one = ONE.exec(request.url);
    if (request.method === "GET" && LIST.test(request.url)) return sendJson(response, 200, page(records));
    // A prune of plugin_configs also reads the frontend apps, so as not to prune them.
    if (request.method === "GET" && FRONTEND_LIST.test(request.url)) return sendJson(response, 200, page([]));
    if (request.method === "POST" && LIST.test(request.url)) {
      const created = record(10, { ...(JSON.parse(request.body) as object), deleted: false });
      records.push(created);
      return sendJson(response, 201, created);
    }
    if (request.method === "PATCH" && one) {
      const index = records.findIndex((item) => item.id === Number(one[1]));
      const existing = records[index];
      if (!existing)
        return sendJson(response, 404, {
          type: "invalid_request",
          code: "not_found",
          detail: "Not found.",
          attr: null,
        });
      const updated = { ...existing, ...(JSON.parse(request.body) as object) };
      if (updated.deleted === true) records.splice(index, 1);
      else records[index] = updated;
      return sendJson(response, 200, updated);
    }
    sendJson(response, 404, { type: "invalid_request", code: "not_found", detail: "Not found.", attr: null });
  };
}

const isList = (request: RecordedRequest) => request.method === "GET" && LIST.test(request.url);
const isCreate = (request: RecordedRequest) => request.method === "POST" && LIST.test(request.url);
const isDelete = (request: RecordedRequest) =>
  request.method === "DELETE" || (request.method === "PATCH" && request.body.includes('"deleted":true'));

function sendText(response: ServerResponse, status: number, contentType: string, text: string): void {
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/** Streams a JSON-looking body that never ends, until the client hangs up; counts what it sent. */
function streamEndlessly(response: ServerResponse, sent: { bytes: number }): void {
  const chunk = Buffer.from(`${JSON.stringify(record(1)).repeat(1)},`.repeat(4096));
  response.writeHead(200, { "content-type": "application/json" });
  response.write('{"count":1,"next":null,"results":[');
  const pump = () => {
    while (!response.destroyed && sent.bytes < 2 * 1024 ** 3) {
      sent.bytes += chunk.length;
      if (!response.write(chunk)) {
        response.once("drain", pump);
        return;
      }
    }
  };
  response.on("close", () => response.removeAllListeners("drain"));
  pump();
}

/** Sends the headers, then one byte every 100 ms: never a whole body. */
function dripForever(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "application/json", "content-length": "100000" });
  const timer = setInterval(() => response.write(" "), 100);
  response.on("close", () => clearInterval(timer));
}

// The cases run concurrently (most of their time is spent waiting out timeouts), so everything
// they start is stopped once at the end.
const servers: ScriptedServer[] = [];
const directories: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const remove of directories.splice(0)) await remove();
});

async function runAgainst(
  fault: Fault,
  command: "plan" | "apply",
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
) {
  const server = await startScriptedServer(serviceWith(fault));
  servers.push(server);
  const directory = await temporaryDirectory();
  directories.push(directory.remove);
  const manifest = await writeManifest(directory.path, MANIFEST);
  const approve = command === "apply" ? ["--auto-approve"] : [];
  const run = await runCliInProcess(
    [command, ...approve, "-f", manifest, "--base-url", server.url, ...extra],
    {
      env: { PCSYNC_API_KEY: KEY, ...env },
      cwd: directory.path,
    },
  );
  return { run, server };
}

/** Exit 1, and stderr is one line saying what went wrong: no stack trace, no internal error. */
function expectCleanFailure(run: InProcessRun, message: RegExp): void {
  expect(run.code, run.stderr).toBe(1);
  // An apply's log of finished changes (no terminal here) comes before its one error line.
  const lines = withoutOutcomeLines(run.stderr).trimEnd().split("\n");
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^pcsync: /);
  expect(lines[0]).toMatch(message);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toMatch(/internal error/);
}

const writesOf = (server: ScriptedServer) => server.requests.filter((request) => request.method !== "GET");

describe.concurrent("plan against a hostile server", () => {
  it("refuses a next link to another origin, and the key never goes there", async () => {
    const elsewhere = await startScriptedServer((_request, response) => sendJson(response, 200, page([])));
    servers.push(elsewhere);
    const { run } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      sendJson(
        response,
        200,
        page(
          [record(1, { name: "GeoIP", plugin: 1 })],
          `${elsewhere.url}/api/projects/1/plugin_configs/?offset=1`,
          2,
        ),
      );
      return true;
    }, "plan");
    expectCleanFailure(
      run,
      /next-page link points to http:\/\/127\.0\.0\.1:\d+\/api\/projects\/1\/plugin_configs\/, outside .*refusing to follow it/,
    );
    expect(elsewhere.requests).toEqual([]);
    expect(run.stdout).toBe("");
  });

  it("reports a body that is not JSON", async () => {
    const { run } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      sendText(response, 200, "text/html", "<html><body>Welcome to nginx!</body></html>");
      return true;
    }, "plan");
    expectCleanFailure(
      run,
      /GET \/api\/projects\/1\/plugin_configs\/: malformed response: not JSON \(it starts with "<html>/,
    );
  });

  it("stops reading a body far larger than any page, with bounded memory", async () => {
    const sent = { bytes: 0 };
    const { run } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      streamEndlessly(response, sent);
      return true;
    }, "plan");
    expectCleanFailure(run, /the response is larger than the 64 MiB limit/);
    // The client hung up near its limit instead of reading on (the server stops at 2 GiB).
    expect(sent.bytes).toBeLessThan(256 * 1024 ** 2);
  });

  it("times out a server that drips its answer (slow loris)", async () => {
    const { run, server } = await runAgainst(
      (request, response) => {
        if (!isList(request)) return false;
        dripForever(response);
        return true;
      },
      "plan",
      // The default 30 s timeout and every other duration of the client (the backoffs between the
      // 9 attempts) a hundredth as long, in the proportions users get: 300 ms, and 0.1 s of backoff
      // where --timeout 0.3 alone left 12 s of it.
      [],
      { PCSYNC_TIME_SCALE: "0.01" },
    );
    expectCleanFailure(
      run,
      /GET \/api\/projects\/1\/plugin_configs\/: response body not complete within 300 ms, after 9 attempts/,
    );
    expect(server.requests.filter(isList)).toHaveLength(9);
  }, 90_000);

  it("names the first field of the wrong type", async () => {
    const { run } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      sendJson(response, 200, page([record(1, { name: "GeoIP", plugin: 1, enabled: "yes" })]));
      return true;
    }, "plan");
    expectCleanFailure(run, /malformed response: results\[0\]\.enabled: must be boolean/);
  });
});

describe.concurrent("apply against a hostile server", () => {
  /** What apply reports: the failed change, and the others done. */
  function expectPartial(run: InProcessRun, failed: RegExp, done: string): void {
    expectCleanFailure(
      run,
      /apply incomplete: 1 failed, 0 skipped, 2 done\. Fix the errors above and run apply again/,
    );
    expect(run.stdout).toMatch(failed);
    expect(run.stdout).toContain(`Apply incomplete: ${done}; 1 failed, 0 skipped.`);
  }

  /** A create whose answer could not be read and whose record the re-read did not find: unknown. */
  function expectUnknownCreate(run: InProcessRun, problem: RegExp): void {
    expectCleanFailure(run, /apply incomplete: 0 failed, 0 skipped, 1 unknown, 2 done\. /);
    expect(run.stdout).toMatch(problem);
    expect(run.stdout).toMatch(
      /^\? unknown: create "New" in project 1 plugin_configs .*the service's answer could not be read, and re-reading the family found no record made by it/m,
    );
    expect(run.stdout).toContain(
      "Apply incomplete: 0 created, 1 updated, 1 deleted, 0 reordered; 0 failed, 0 skipped, 1 unknown.",
    );
    expect(run.stdout).toContain("Run `pcsync plan` to see what the server holds");
  }

  it("a create answered with something that is not JSON", async () => {
    const { run, server } = await runAgainst((request, response) => {
      if (!isCreate(request)) return false;
      sendText(response, 201, "text/plain", "created, probably");
      return true;
    }, "apply");
    expectUnknownCreate(run, /malformed response: not JSON/);
    // Never sent again: the service answered, so a second POST could only duplicate.
    expect(server.requests.filter(isCreate)).toHaveLength(1);
  });

  it("a create the service made but answered unreadably: found by one re-read, counted as created", async () => {
    const { run, server } = await runAgainst((request, response, records) => {
      if (!isCreate(request)) return false;
      records.push(record(10, { ...(JSON.parse(request.body) as object), deleted: false }));
      sendText(response, 201, "text/plain", "created, probably");
      return true;
    }, "apply");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Apply complete: 1 created, 1 updated, 1 deleted, 0 reordered.");
    expect(server.requests.filter(isCreate)).toHaveLength(1);
  });

  it("a create answered with a record of the wrong types", async () => {
    const { run } = await runAgainst((request, response) => {
      if (!isCreate(request)) return false;
      sendJson(response, 201, record(10, { name: "New", plugin: "3" }));
      return true;
    }, "apply");
    expectUnknownCreate(run, /malformed response: plugin: must be integer/);
  });

  it("a create answered with an endless body", async () => {
    const sent = { bytes: 0 };
    const { run } = await runAgainst((request, response) => {
      if (!isCreate(request)) return false;
      streamEndlessly(response, sent);
      return true;
    }, "apply");
    expectUnknownCreate(run, /larger than the 64 MiB limit/);
    expect(sent.bytes).toBeLessThan(256 * 1024 ** 2);
  });

  it("a create that never gets an answer: re-read, sent again a bounded number of times, then reported", async () => {
    const { run, server } = await runAgainst(
      (request, response) => {
        if (!isCreate(request)) return false;
        dripForever(response);
        return true;
      },
      "apply",
      ["--timeout", "0.3"],
    );
    expectPartial(
      run,
      /✗ failed: create "New" .*within 300 ms/,
      "0 created, 1 updated, 1 deleted, 0 reordered",
    );
    const posts = server.requests.filter(isCreate);
    expect(posts.length).toBeGreaterThan(1);
    expect(posts.length).toBeLessThanOrEqual(5);
  });

  it("a delete answered 500, as posthog-2024 answers for an unknown id", async () => {
    const { run, server } = await runAgainst((request, response) => {
      if (!isDelete(request)) return false;
      sendJson(response, 500, {
        type: "server_error",
        code: "error",
        detail: "A server error occurred.",
        attr: null,
      });
      return true;
    }, "apply");
    expectPartial(
      run,
      /✗ failed: delete "Old" \(id 2\) in project 1 plugin_configs .*500 PATCH \/api\/projects\/1\/plugin_configs\/2\/: A server error occurred\./,
      "1 created, 1 updated, 0 deleted, 0 reordered",
    );
    expect(writesOf(server).filter(isDelete)).toHaveLength(1);
  });

  it("a read refused before any write changes nothing", async () => {
    const { run, server } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      sendText(response, 200, "text/html", "<html>login</html>");
      return true;
    }, "apply");
    expectCleanFailure(run, /malformed response: not JSON/);
    expect(writesOf(server)).toEqual([]);
  });

  it("an error text with line breaks stays on one line (shown as \\n), so it cannot forge a CI command", async () => {
    const { run } = await runAgainst((request, response) => {
      if (!isList(request)) return false;
      sendJson(response, 403, {
        type: "authentication_error",
        code: "permission_denied",
        detail: "Denied.\n::error file=pcsync.yaml::forged\r\n::add-mask::x",
        attr: null,
      });
      return true;
    }, "plan");
    expect(run.code, run.stderr).toBe(1);
    // The error on one line, then pcsync's own hint for a 403.
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(
        /^pcsync: 403 GET .*: Denied\.\\n::error file=pcsync\.yaml::forged\\r\\n::add-mask::x$/,
      ),
      expect.stringMatching(/^hint: /),
    ]);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/^::/m);
  });
});
