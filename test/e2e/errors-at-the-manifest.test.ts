// E2E: errors that point at the manifest, as a user sees them from the built CLI: a project the
// server does not know, a server.base_url that cannot be used or whose path is wrong, a tab, an
// unknown template, a value YAML read as a number. One line per mistake, with its file:line.

import { basename } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let server: TestServer;
let dir: WorkDir;
beforeAll(async () => {
  [server, dir] = await Promise.all([startServer("seed"), temporaryDirectory()]);
});
afterAll(async () => {
  await Promise.all([server.close(), dir.remove()]);
});

/** Runs the built CLI in the work directory on a manifest written there; the URL only from it. */
async function run(args: readonly string[], yaml: string, env: NodeJS.ProcessEnv = {}) {
  const file = basename(await dir.write("pcsync.yaml", yaml));
  const result = await server.runBuilt([...args, "-f", file], {
    cwd: dir.path,
    env: { PCSYNC_BASE_URL: undefined, ...env },
  });
  return { ...result, file, lines: result.stderr.trimEnd().split("\n") };
}

const family = (project: string) => `  "${project}":\n    plugin_configs:\n      configs: []\n`;
const withServer = (baseUrl: string, projects = family("1")) =>
  `version: 1\nserver:\n  base_url: ${baseUrl}\nprojects:\n${projects}`;

describe.concurrent("errors that point at the manifest", () => {
  it("a project the server does not know names its place, and that the key may not see it", async () => {
    const { code, lines, file } = await run(
      ["plan"],
      withServer(server.emulator.url, family("1") + family("999")),
    );
    expect(code).toBe(1);
    expect(lines).toEqual([
      `pcsync: project 999 (${file}:8): the server at ${server.emulator.url} does not know it, or it is not visible to this API key (404 GET /api/projects/999/plugin_configs/: Project not found.). Check the project id, or use a key with access to project 999.`,
    ]);
  });

  it("a project named only in a project set's list is traced to its entry there", async () => {
    const yaml = [
      "version: 1",
      "server:",
      `  base_url: ${server.emulator.url}`,
      "project_sets:",
      "  - name: fleet",
      "    projects:",
      '      - "1"',
      '      - "998"',
      "    plugin_configs:",
      "      configs: []",
      "",
    ].join("\n");
    const { code, lines, file } = await run(["plan"], yaml);
    expect(code).toBe(1);
    expect(lines[0]).toMatch(new RegExp(`^pcsync: project 998 \\(${file}:8\\): the server at `));
  });

  it("server.base_url over plain http, or holding an API path, is named at its line", async () => {
    const [http, apiPath] = await Promise.all([
      run(["plan"], withServer("http://app.example.com")),
      run(["plan"], withServer(`${server.emulator.url}/api/projects/1/plugin_configs/`)),
    ]);
    expect(http.code).toBe(1);
    expect(http.lines).toEqual([
      `pcsync: Refusing to send the API key over plain http to app.example.com (the base URL from server.base_url at ${http.file}:3): use an https:// base URL, or pass --insecure-http if the network is trusted.`,
    ]);
    expect(apiPath.code).toBe(1);
    expect(apiPath.lines[0]).toContain(`(from server.base_url at ${apiPath.file}:3): it holds an API path`);
    // The same URL from the environment says so instead.
    const fromEnv = await run(["plan"], withServer("https://unused.example.com"), {
      PCSYNC_BASE_URL: `${server.emulator.url}/api/projects/`,
    });
    expect(fromEnv.lines[0]).toContain("(from PCSYNC_BASE_URL): it holds an API path");
  });

  it("a base URL whose path is wrong: the 404s say to check it, not that the project is unknown", async () => {
    const wrong = `${server.emulator.url}/posthog`;
    const plan = await run(["plan"], withServer(wrong));
    expect(plan.code).toBe(1);
    expect(plan.lines).toEqual([
      `pcsync: Invalid base URL ${wrong} (from server.base_url at ${plan.file}:3): GET /posthog/api/projects/1/plugin_configs/ and GET /posthog/api/projects/ both answer 404, so the service's API is not under it; check its path: it is the service's root (with the path prefix it is mounted under, if any), and pcsync adds /api/projects/... itself.`,
    ]);
    // Any other command's first request: a hint under the 404.
    const logs = await server.runBuilt(["logs", "--project", "1", "--config", "GeoIP"], {
      env: { PCSYNC_BASE_URL: wrong },
    });
    expect(logs.code).toBe(1);
    expect(logs.stderr).toContain(
      `hint: this was the first answer from ${wrong} (from PCSYNC_BASE_URL): if every request gets 404, check the base URL's path.`,
    );
  });

  it("a project the service does not have: the hint is about the id, not the base URL", async () => {
    const result = await server.runBuilt(["export", "--project", "99"], {
      env: { PCSYNC_BASE_URL: server.emulator.url },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Project not found.");
    expect(result.stderr).toContain(
      "hint: the service has no project of this id that the API key can see: check the project id",
    );
    expect(result.stderr).not.toContain("check the base URL's path");
  });

  it("one tab gives one error, one unknown template one, a number where text goes says to quote it", async () => {
    const configs = '  "1":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n';
    const [tab, use, quote] = await Promise.all([
      run(
        ["validate"],
        `version: 1\nprojects:\n${configs}\t        plugin: 1\n        - name: B\n          plugin: 2\n`,
      ),
      run(
        ["validate"],
        `version: 1\ntemplates:\n  base:\n    plugin_configs:\n      configs: [{ name: A, plugin: 1 }]\nproject_sets:\n  - name: web\n    projects: ["1"]\n    use: [bsae]\n    plugin_configs:\n      overrides:\n        A: { enabled: true }\nprojects:\n  "1":\n    plugin_configs:\n      omit: [A]\n`,
      ),
      run(["validate"], `version: 1\nprojects:\n${configs}          plugin: 1\n          description: 42\n`),
    ]);
    expect(tab.code).toBe(1);
    expect(tab.lines).toEqual([
      `${tab.file}:7:1: a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces`,
      "pcsync: manifest invalid: 1 error in 1 file",
    ]);
    expect(use.lines).toEqual([
      `${use.file}:9:11: unknown template "bsae" in project set "web"; did you mean "base"?`,
      "pcsync: manifest invalid: 1 error in 1 file",
    ]);
    expect(quote.lines[0]).toBe(
      `${quote.file}:8:24: "description" must be text or null, got 42; if it is meant as text, quote it: description: "42"`,
    );
  });
});
