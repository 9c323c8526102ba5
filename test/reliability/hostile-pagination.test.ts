// Pagination and transport against a hostile or changing server, end to end: the CLI's apply
// (in-process; built, where the process's memory is measured) against a node:http service that pages its lists two records at a time (a server may cap the
// page size) and misbehaves in one way each. A list read must either be the whole of one state
// of the list or be refused with one clear line; the key never leaves for another origin; and a
// refused read writes nothing.

import { readFile, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { type CliRun, runBuiltCli } from "../support/cli.js";
import { type InProcessRun, runCliInProcess } from "../support/in-process.js";
import { KEY } from "../support/scenario.js";
import {
  page,
  type RecordedRequest,
  record,
  type ScriptedServer,
  sendEmpty,
  sendJson,
  startScriptedServer,
} from "../support/scripted-server.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

/** Project 1's plugin_configs as the manifests want them: A to F, orders 1 to 6. */
const NAMES = ["A", "B", "C", "D", "E", "F"];
const PAGE_SIZE = 2;

function manifest(options: { prune: boolean; names: readonly string[] }): string {
  const configs = options.names
    .map((name) => {
      const position = NAMES.indexOf(name) + 1;
      return `        - name: ${name}\n          plugin: ${position}\n          order: ${position}\n`;
    })
    .join("");
  return `version: 1\nprojects:\n  "1":\n    plugin_configs:\n      prune: ${options.prune}\n      configs:\n${configs}`;
}

const LIST = /^\/api\/projects\/(\w+)\/(plugin_configs|pipeline_frontend_apps_configs)\/?(\?.*)?$/;
const ONE = /^\/api\/projects\/(\w+)\/(plugin_configs|pipeline_frontend_apps_configs)\/(\d+)\/?$/;

interface Service {
  /** Records by `project/family`, in list order. */
  lists: Map<string, Array<Record<string, unknown>>>;
  nextId: number;
}

interface Hooks {
  /** Answers instead of the service when it returns true. */
  fault?: (request: RecordedRequest, response: ServerResponse, service: Service) => boolean;
  /** The next link of a list page, given the one the service would send. */
  nextLink?: (request: RecordedRequest, next: string | null) => string | null;
  /** Runs after a list page is sent: a change made "by someone else" between two pages. */
  afterListPage?: (request: RecordedRequest, service: Service) => void;
}

const NOT_FOUND = { type: "invalid_request", code: "not_found", detail: "Not found.", attr: null };

/** Project 1 holds A to F; project 2 holds ten records of its own, which project 1 must never see. */
function startService(hooks: Hooks) {
  const service: Service = {
    lists: new Map([
      [
        "1/plugin_configs",
        NAMES.map((name, index) => record(index + 1, { name, plugin: index + 1, order: index + 1 })),
      ],
      ["1/pipeline_frontend_apps_configs", [record(50, { name: "App", plugin: 40, order: 1 })]],
      [
        "2/plugin_configs",
        Array.from({ length: 10 }, (_, index) =>
          record(101 + index, { name: `P2-${index}`, plugin: 1, order: index + 1, team_id: 2 }),
        ),
      ],
    ]),
    nextId: 1000,
  };
  let url = "";
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    if (hooks.fault?.(request, response, service)) return;
    const list = LIST.exec(request.url);
    const one = ONE.exec(request.url);
    if (list) {
      const key = `${list[1]}/${list[2]}`;
      const items = service.lists.get(key) ?? [];
      if (request.method === "GET") {
        const asked = new URL(request.url, url);
        const offset = Number(asked.searchParams.get("offset") ?? 0);
        let next: string | null = null;
        if (offset + PAGE_SIZE < items.length) {
          const link = new URL(asked.href);
          link.searchParams.set("limit", String(PAGE_SIZE));
          link.searchParams.set("offset", String(offset + PAGE_SIZE));
          next = link.href;
        }
        next = hooks.nextLink ? hooks.nextLink(request, next) : next;
        sendJson(response, 200, page(items.slice(offset, offset + PAGE_SIZE), next, items.length));
        hooks.afterListPage?.(request, service);
        return;
      }
      if (request.method === "POST") {
        const created = record(service.nextId++, { ...(JSON.parse(request.body) as object), deleted: false });
        items.push(created);
        service.lists.set(key, items);
        return sendJson(response, 201, created);
      }
    }
    if (one && (request.method === "PATCH" || request.method === "DELETE")) {
      const items = service.lists.get(`${one[1]}/${one[2]}`) ?? [];
      const index = items.findIndex((item) => item.id === Number(one[3]));
      const existing = items[index];
      if (!existing) return sendJson(response, 404, NOT_FOUND);
      const updated = { ...existing, ...(request.body === "" ? {} : (JSON.parse(request.body) as object)) };
      if (updated.deleted === true || request.method === "DELETE") items.splice(index, 1);
      else items[index] = updated;
      if (request.method === "DELETE") return sendEmpty(response, 204);
      return sendJson(response, 200, updated);
    }
    sendJson(response, 404, NOT_FOUND);
  };
  return startScriptedServer(handler).then((server) => {
    url = server.url;
    return { server, service };
  });
}

// The cases run concurrently (each mostly waits on the server), so what they start is stopped
// once at the end.
const servers: ScriptedServer[] = [];
const directories: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const remove of directories.splice(0)) await remove();
});

/** Applies in-process; with `builtEnv`, the built CLI runs instead, with that added to its environment. */
async function applyAgainst(
  hooks: Hooks,
  manifestText: string,
  builtEnv?: NodeJS.ProcessEnv,
  extraArgs: readonly string[] = [],
) {
  const { server, service } = await startService(hooks);
  servers.push(server);
  const directory = await temporaryDirectory();
  directories.push(directory.remove);
  const file = await writeManifest(directory.path, manifestText);
  const args = ["apply", "--auto-approve", "-f", file, "--base-url", server.url, ...extraArgs];
  const run =
    builtEnv === undefined
      ? await runCliInProcess(args, { env: { PCSYNC_API_KEY: KEY }, cwd: directory.path })
      : await runBuiltCli(args, { env: { PCSYNC_API_KEY: KEY, ...builtEnv }, timeoutMs: 30_000 });
  return { run, server, service, directory: directory.path };
}

const PRUNE_A_TO_F = manifest({ prune: true, names: NAMES });

const isListOf = (project: string, family: string) => (request: RecordedRequest) =>
  request.method === "GET" && request.url.startsWith(`/api/projects/${project}/${family}/`);
const isProject1List = isListOf("1", "plugin_configs");
const isFirstPage = (request: RecordedRequest) => isProject1List(request) && !request.url.includes("offset=");
const writesOf = (server: ScriptedServer) => server.requests.filter((request) => request.method !== "GET");

/** Exit 1, and stderr is one line saying what went wrong: no stack trace, no internal error. */
function expectCleanFailure(run: CliRun | InProcessRun, message: RegExp): void {
  expect(run.code, run.stderr).toBe(1);
  const lines = run.stderr.trimEnd().split("\n");
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^pcsync: /);
  expect(lines[0]).toMatch(message);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toMatch(/internal error|UND_ERR|undici/i);
}

describe.concurrent("next links that lead off the list", () => {
  it("a next link to another project's list is not followed, and nothing is written", async () => {
    const { run, server } = await applyAgainst(
      {
        nextLink: (request, next) =>
          isFirstPage(request) && next ? next.replace("/projects/1/", "/projects/2/") : next,
      },
      PRUNE_A_TO_F,
    );
    expectCleanFailure(
      run,
      /GET \/api\/projects\/1\/plugin_configs\/: the next-page link \/api\/projects\/2\/plugin_configs\/\?limit=2&offset=2 is not the next page of this list \(its path is \/api\/projects\/2\/plugin_configs\/, not \/api\/projects\/1\/plugin_configs\/\); refusing to follow it/,
    );
    expect(server.requests.filter(isListOf("2", "plugin_configs"))).toEqual([]);
    expect(writesOf(server)).toEqual([]);
  });

  it("a next link to the other family's list is not followed, and nothing is written", async () => {
    const { run, server } = await applyAgainst(
      {
        nextLink: (request, next) =>
          isFirstPage(request) && next
            ? next.replace("/plugin_configs/", "/pipeline_frontend_apps_configs/")
            : next,
      },
      PRUNE_A_TO_F,
    );
    expectCleanFailure(
      run,
      /the next-page link \/api\/projects\/1\/pipeline_frontend_apps_configs\/\?limit=2&offset=2 is not the next page of this list/,
    );
    expect(
      server.requests.filter((request) => request.url.includes("frontend_apps_configs/?limit=2&offset=2")),
    ).toEqual([]);
    expect(writesOf(server)).toEqual([]);
  });
});

describe.concurrent("lists that never end", () => {
  /** Project 1's plugin_configs answered as a list of `count` records whose `next` never stops. */
  const endless =
    (delayMs: number, count: number) => (request: RecordedRequest, response: ServerResponse) => {
      if (!isProject1List(request)) return false;
      const url = new URL(request.url, "http://service");
      const offset = Number(url.searchParams.get("offset") ?? 0);
      url.searchParams.set("offset", String(offset + PAGE_SIZE));
      const records = [offset + 1, offset + 2].map((id) =>
        record(id, { name: `N${id}`, plugin: 1, order: id }),
      );
      // A relative link: the client resolves it against the page's own URL.
      const next = `${url.pathname}${url.search}`;
      setTimeout(() => sendJson(response, 200, page(records, next, count)), delayMs);
      return true;
    };

  it("a count of a billion with a next that never stops ends at the first page (--timeout 5), naming the family", async () => {
    const { run, server } = await applyAgainst(
      { fault: endless(0, 1_000_000_000) },
      PRUNE_A_TO_F,
      undefined,
      ["--timeout", "5"],
    );
    expectCleanFailure(
      run,
      /^pcsync: GET \/api\/projects\/1\/plugin_configs\/: the service gives the count of project 1's plugin_configs as 1000000000, more than the 100000 records pcsync reads of one list \(--max-list-records\); refusing to read further\. If the list really is that long or the service that slow, raise --max-list-records/,
    );
    expect(server.requests.filter(isProject1List)).toHaveLength(1);
    expect(writesOf(server)).toEqual([]);
  });

  it("a slow list within a plausible count ends at --list-timeout, and nothing is written", async () => {
    const { run, server } = await applyAgainst({ fault: endless(25, 90_000) }, PRUNE_A_TO_F, undefined, [
      "--list-timeout",
      "0.3",
      "--concurrency",
      "2",
    ]);
    expectCleanFailure(
      run,
      /^pcsync: GET \/api\/projects\/1\/plugin_configs\/: reading project 1's plugin_configs has taken \d+(\.\d)? s, more than the 0\.3 s one list may take \(--list-timeout\)/,
    );
    expect(server.requests.filter(isProject1List).length).toBeLessThan(60);
    expect(writesOf(server)).toEqual([]);
  });
});

describe.concurrent("a list that changes while it is paged", () => {
  it("a record deleted between pages: the list is read again and the plan is right", async () => {
    // Someone deletes B while pcsync reads: the old offsets would skip C, plan it as a create
    // (a duplicate) and delete B under prune.
    let firstPages = 0;
    const { run, server, service } = await applyAgainst(
      {
        afterListPage: (request, state) => {
          if (!isFirstPage(request) || ++firstPages > 1) return;
          const items = state.lists.get("1/plugin_configs") ?? [];
          items.splice(
            items.findIndex((item) => item.name === "B"),
            1,
          );
        },
      },
      manifest({ prune: true, names: ["A", "C", "D", "E", "F"] }),
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(writesOf(server)).toEqual([]);
    expect(server.requests.filter(isFirstPage)).toHaveLength(2);
    expect(service.lists.get("1/plugin_configs")?.map((item) => item.name)).toEqual([
      "A",
      "C",
      "D",
      "E",
      "F",
    ]);
  });

  it("a record inserted between pages: the list is read again and the plan is right", async () => {
    // Someone adds X at the head while pcsync reads: the old offsets would show B twice, and the
    // plan would refuse with advice to pin one of "ids 2, 2".
    let firstPages = 0;
    const { run, server } = await applyAgainst(
      {
        afterListPage: (request, state) => {
          if (!isFirstPage(request) || ++firstPages > 1) return;
          state.lists.get("1/plugin_configs")?.unshift(record(900, { name: "X", plugin: 9, order: 0 }));
        },
      },
      manifest({ prune: false, names: NAMES }),
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toMatch(/ids 2, 2/);
    expect(writesOf(server)).toEqual([]);
    expect(server.requests.filter(isFirstPage)).toHaveLength(2);
  });

  it("a list that changes on every read is refused with a clear message, and nothing is written", async () => {
    const { run, server } = await applyAgainst(
      {
        afterListPage: (request, state) => {
          if (!isFirstPage(request)) return;
          state.lists
            .get("1/plugin_configs")
            ?.unshift(record(state.nextId++, { name: `X${state.nextId}`, plugin: 9, order: 0 }));
        },
      },
      PRUNE_A_TO_F,
    );
    expectCleanFailure(
      run,
      /GET \/api\/projects\/1\/plugin_configs\/: the service's list changed while it was being read, on 3 reads in a row \(last: .+\), so pcsync has no consistent copy of it and uses none; run pcsync again once nothing else is changing these records/,
    );
    expect(server.requests.filter(isFirstPage)).toHaveLength(3);
    expect(writesOf(server)).toEqual([]);
  });
});

/** Gzip members of 1 MiB of zeros each, concatenated: one inflates to 1 MiB from about 1 KiB. */
const BOMB_MEMBER = gzipSync(Buffer.alloc(1024 * 1024));

/** Streams gzip members (up to 64 GiB inflated) until the client hangs up; counts what it sent. */
function sendGzipBomb(response: ServerResponse, sent: { bytes: number }): void {
  response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
  const pump = () => {
    while (!response.destroyed && sent.bytes < 65_536 * BOMB_MEMBER.length) {
      sent.bytes += BOMB_MEMBER.length;
      if (!response.write(BOMB_MEMBER)) {
        response.once("drain", pump);
        return;
      }
    }
    if (!response.destroyed) response.end();
  };
  response.on("close", () => response.removeAllListeners("drain"));
  pump();
}

describe.concurrent("transport", () => {
  it("a redirect to another origin is not followed: the key never goes there", async () => {
    const elsewhere = await startScriptedServer((_request, response) => sendJson(response, 200, page([])));
    servers.push(elsewhere);
    const { run, server } = await applyAgainst(
      {
        fault: (request, response) => {
          if (!isProject1List(request)) return false;
          response.writeHead(302, { location: `${elsewhere.url}/api/projects/1/plugin_configs/?token=abc` });
          response.end();
          return true;
        },
      },
      PRUNE_A_TO_F,
    );
    expectCleanFailure(
      run,
      /^pcsync: 302 GET \/api\/projects\/1\/plugin_configs\/: the service redirected to http:\/\/127\.0\.0\.1:\d+\/api\/projects\/1\/plugin_configs\/; pcsync does not follow redirects \(the API key is only sent to http:\/\/127\.0\.0\.1:\d+\); check the base URL/,
    );
    expect(run.stderr).not.toContain("token=abc");
    expect(elsewhere.requests).toEqual([]);
    expect(writesOf(server)).toEqual([]);
  });

  it("a response header of 100 KB gets one clear line, not the HTTP parser's error", async () => {
    const { run, server } = await applyAgainst(
      {
        fault: (request, response) => {
          if (!isProject1List(request)) return false;
          response.writeHead(200, { "content-type": "application/json", "x-padding": "a".repeat(100_000) });
          response.end(JSON.stringify(page([])));
          return true;
        },
      },
      PRUNE_A_TO_F,
    );
    expectCleanFailure(
      run,
      /^pcsync: GET \/api\/projects\/1\/plugin_configs\/: the response headers are larger than the 16 KiB limit, so the answer was not read; is the base URL that of the Plugin Configuration Service/,
    );
    // Not worth repeating: the same server sends the same headers.
    expect(server.requests.filter(isProject1List)).toHaveLength(1);
    expect(writesOf(server)).toEqual([]);
  });

  it("a gzip bomb is inflated only up to the memory bound, with a clear error", async () => {
    const sent = { bytes: 0 };
    const directory = await temporaryDirectory();
    directories.push(directory.remove);
    // Preloaded into the CLI's process: writes its peak resident memory when it exits.
    const rssFile = join(directory.path, "max-rss");
    const preload = join(directory.path, "report-rss.mjs");
    await writeFile(
      preload,
      `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    const { run, server } = await applyAgainst(
      {
        fault: (request, response) => {
          if (!isProject1List(request)) return false;
          sendGzipBomb(response, sent);
          return true;
        },
      },
      PRUNE_A_TO_F,
      { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` },
    );
    expectCleanFailure(
      run,
      /^pcsync: GET \/api\/projects\/1\/plugin_configs\/: the gzip-encoded response inflates to more than the 64 MiB limit; reading stopped there/,
    );
    const maxRssMiB = Number(await readFile(rssFile, "utf8")) / 1024;
    // 64 MiB of inflated body plus the process itself; inflating the bomb whole would take 64 GiB.
    expect(maxRssMiB).toBeLessThan(400);
    // The client hung up near its bound instead of reading the whole bomb (about 67 MB compressed).
    expect(sent.bytes).toBeLessThan(24 * 1024 * 1024);
    expect(writesOf(server)).toEqual([]);
  });
});
