// E2E: rollback of an apply of every example manifest (owner: ones included) finds nothing changed
// since and restores the stored records exactly, on both profiles; a real change since the run, near
// the owner mark, is still refused (exit 3) and shown as the text and mark that differ.

import { readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROFILE_NAMES } from "../../src/emulator/index.js";
import { PROFILES } from "../../src/emulator/types.js";
import { FAMILY_NAMES } from "../../src/families.js";
import { writeMark } from "../../src/owner-mark.js";
import { spawnCli } from "../support/cli.js";
import { HttpClient } from "../support/http-client.js";
import { runCliInProcess } from "../support/in-process.js";
import { EXAMPLES } from "../support/paths.js";
import { openServer, type RemoteRecord, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory } from "../support/work-dir.js";

/** Every YAML file under examples/ that is a pcsync manifest (not a workflow, a unit, a var file). */
async function exampleManifests(): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(EXAMPLES, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    let data: unknown;
    try {
      data = parse(await readFile(path, "utf8"));
    } catch {
      continue; // several documents (Kubernetes files): not a manifest
    }
    if (typeof data === "object" && data !== null && "version" in data && "projects" in data)
      found.push(path);
  }
  return found.sort();
}

const MANIFESTS = await exampleManifests();

/** Every stored record as the service holds it (not as a list shows it: posthog-2024 fills empty text). */
function stored(server: TestServer): Record<string, unknown>[] {
  const records = server.emulator.snapshot().records.map((record) => ({
    id: record.id,
    project: record.project,
    family: record.family,
    name: record.name,
    plugin: record.plugin,
    enabled: record.enabled,
    order: record.order,
    description: record.description,
    deleted: record.deleted,
    match_action: record.match_action,
  }));
  return records.sort((a, b) => a.id - b.id);
}

/**
 * The records that were there before are stored exactly as they were; those the run created are
 * deleted (the service keeps a deleted row: a create cannot be undone into nothing).
 */
function expectRestored(after: Record<string, unknown>[], before: Record<string, unknown>[], what: string) {
  const ids = new Set(before.map((record) => record.id));
  expect(
    after.filter((record) => ids.has(record.id)),
    `${what}: every stored field is back`,
  ).toEqual(before);
  const created = after.filter((record) => !ids.has(record.id));
  expect(
    created.filter((record) => record.deleted !== true),
    `${what}: created records are deleted`,
  ).toEqual([]);
}

function storedDescription(server: TestServer, id: number): string | null | undefined {
  return server.emulator.snapshot().records.find((record) => record.id === id)?.description;
}

it("finds the owner: examples among the manifests it rolls back", () => {
  const names = MANIFESTS.map((path) => relative(EXAMPLES, path));
  expect(names).toEqual(
    expect.arrayContaining(["pcsync.yaml", "owners/data-platform.yaml", "owners/web.yaml"]),
  );
});

// A dozen CLI runs each: generous under a loaded machine, seconds when it is not.
describe.concurrent.each(PROFILE_NAMES)(
  "rollback of every example on %s",
  { timeout: 120_000 },
  (profile) => {
    it("finds no change made since the apply and restores the stored records exactly", async ({
      onTestFinished,
    }) => {
      const server = await openServer(onTestFinished, profile);
      const { path: dir, remove } = await temporaryDirectory();
      onTestFinished(remove);
      // One server for all: each rollback must leave exactly the state the next apply starts from.
      for (const [index, manifest] of MANIFESTS.entries()) {
        const example = relative(EXAMPLES, manifest);
        const before = stored(server);
        const journal = join(dir, `${index}.jsonl`);
        const applied = await server.run(["apply", "-f", manifest, "--auto-approve", "--journal", journal]);
        expect(applied.code, `${example}: ${applied.stderr}`).toBe(0);
        // An example that matches the state already (small/) writes nothing, and keeps no journal.
        if (JSON.stringify(stored(server)) === JSON.stringify(before)) {
          expect(applied.stdout, example).toMatch(/No changes/);
          continue;
        }
        // --force too: its warning counts changes made since, and there are none.
        const undone = await server.run(["rollback", "--journal", journal, "--auto-approve", "--force"], {
          cwd: dir,
        });
        expect(undone.code, `${example}: ${undone.stderr}`).toBe(0);
        expect(undone.stderr, example).not.toMatch(/changed since|warning: --force/);
        expect(undone.stdout, example).toMatch(/^Rollback complete/m);
        expectRestored(stored(server), before, example);
      }
    });
  },
);

/** `pcsync serve --port 0` as a user starts it, as a child process; stopped when the test ends. */
async function spawnServe(profile: string, onTestFinished: (handler: () => Promise<void>) => void) {
  const serve = spawnCli(["serve", "--port", "0", "--profile", profile], { timeoutMs: 120_000 });
  onTestFinished(async () => {
    serve.child.kill("SIGINT");
    await serve.done;
  });
  const line = () => /export PCSYNC_BASE_URL=(\S+) PCSYNC_API_KEY=(\S+)/.exec(serve.soFar().stdout);
  await waitFor(() => line() !== null, "pcsync serve to listen", 30_000);
  const [, url = "", key = ""] = line() ?? [];
  return { env: { PCSYNC_BASE_URL: url, PCSYNC_API_KEY: key }, http: new HttpClient(url, key) };
}

/** Every live record of every project, both families, as a client lists them. */
async function listedState(http: HttpClient): Promise<unknown[]> {
  const projects = (await http.get("/api/projects/?limit=1000")).body as { results: { id: number }[] };
  const records: unknown[] = [];
  for (const { id: project } of projects.results)
    for (const family of FAMILY_NAMES) {
      const { body } = await http.get(`/api/projects/${project}/${family}/?limit=1000`);
      for (const record of (body as { results: RemoteRecord[] }).results) {
        const { id, name, plugin, enabled, order, description, deleted, match_action } =
          record as RemoteRecord & {
            match_action: unknown;
          };
        records.push({
          project,
          family,
          id,
          name,
          plugin,
          enabled,
          order,
          description,
          deleted,
          match_action,
        });
      }
    }
  return records;
}

describe.concurrent.each(PROFILE_NAMES)(
  "rollback of every example against pcsync serve --profile %s",
  { timeout: 120_000 },
  (profile) => {
    it("finds no change since and lists every record as before", async ({ onTestFinished }) => {
      const { env, http } = await spawnServe(profile, onTestFinished);
      const { path: dir, remove } = await temporaryDirectory();
      onTestFinished(remove);
      const run = (args: string[]) => runCliInProcess(args, { env, cwd: dir });
      for (const [index, manifest] of MANIFESTS.entries()) {
        const example = relative(EXAMPLES, manifest);
        const before = await listedState(http);
        const journal = join(dir, `${index}.jsonl`);
        const applied = await run(["apply", "-f", manifest, "--auto-approve", "--journal", journal]);
        expect(applied.code, `${example}: ${applied.stderr}`).toBe(0);
        if (/No changes/.test(applied.stdout)) continue;
        const undone = await run(["rollback", "--journal", journal, "--auto-approve"]);
        expect(undone.code, `${example}: ${undone.stderr}`).toBe(0);
        expect(await listedState(http), example).toEqual(before);
      }
    });
  },
);

describe.concurrent.each(PROFILE_NAMES)(
  "rollback of an owner: apply on %s",
  { timeout: 90_000 },
  (profile) => {
    const OWNER = "data-platform";
    const TEXT = "Adds country to events";
    const manifest = join(EXAMPLES, "owners", "data-platform.yaml");

    /** A server with owners/data-platform.yaml applied: its journal, and GeoIP's id and stored state. */
    async function applied(onTestFinished: (handler: () => Promise<void>) => void) {
      const server = await openServer(onTestFinished, profile);
      const { path: dir, remove } = await temporaryDirectory();
      onTestFinished(remove);
      const before = stored(server);
      const journal = join(dir, "apply.jsonl");
      const run = await server.run(["apply", "-f", manifest, "--auto-approve", "--journal", journal]);
      expect(run.code, run.stderr).toBe(0);
      const geoip = (await server.list(1, "plugin_configs")).find((record) => record.name === "GeoIP");
      if (geoip === undefined) throw new Error("GeoIP is not listed");
      expect(storedDescription(server, geoip.id)).toBe(writeMark(TEXT, OWNER));
      const edit = async (description: string) => {
        const reply = await server.call("PATCH", `/api/projects/1/plugin_configs/${geoip.id}/`, {
          description,
        });
        expect(reply.status).toBe(200);
      };
      const rollback = (...flags: string[]) =>
        server.run(["rollback", "--journal", journal, "--auto-approve", ...flags], { cwd: dir });
      return { server, before, id: geoip.id, edit, rollback };
    }

    const left = `the run left "${TEXT}" (owner mark "${OWNER}")`;

    it("refuses when someone edited the text and kept the mark, showing both texts", async ({
      onTestFinished,
    }) => {
      const { server, before, edit, rollback, id } = await applied(onTestFinished);
      await edit(writeMark("Edited by hand", OWNER));
      const refused = await rollback();
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(
        `record ${id} ("GeoIP") in project 1 plugin_configs: description is "Edited by hand" (owner mark "${OWNER}") now; ${left}`,
      );
      expect(storedDescription(server, id)).toBe(writeMark("Edited by hand", OWNER));
      const forced = await rollback("--force");
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toContain(
        "warning: --force puts back the journal's values over 1 change made since the run",
      );
      expectRestored(stored(server), before, "GeoIP");
    });

    it("refuses when someone stripped the mark and kept the text: the mark is the difference", async ({
      onTestFinished,
    }) => {
      const { server, before, edit, rollback, id } = await applied(onTestFinished);
      await edit(TEXT);
      const refused = await rollback();
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(
        `record ${id} ("GeoIP") in project 1 plugin_configs: description is "${TEXT}" (no owner mark) now; ${left}`,
      );
      expect((await rollback("--force")).code).toBe(0);
      expectRestored(stored(server), before, "GeoIP");
    });

    it("takes white space the service trims for no change, and white space it keeps for one", async ({
      onTestFinished,
    }) => {
      const { server, before, edit, rollback, id } = await applied(onTestFinished);
      await edit(`  ${writeMark(TEXT, OWNER)} \n`);
      const edited = storedDescription(server, id);
      const run = await rollback();
      if (PROFILES[profile].trimsText) {
        // Stored exactly as the run left it: nothing changed since.
        expect(edited).toBe(writeMark(TEXT, OWNER));
        expect(run.code, run.stderr).toBe(0);
        expectRestored(stored(server), before, "GeoIP");
      } else {
        expect(edited).toBe(`  ${writeMark(TEXT, OWNER)} \n`);
        expect(run.code).toBe(3);
        expect(run.stderr).toContain(`record ${id} ("GeoIP") in project 1 plugin_configs: description is`);
        expect(run.stderr).toContain(left);
      }
    });

    it("puts back a description with its mark: rollback of a second apply that changed the text", async ({
      onTestFinished,
    }) => {
      const { server, id } = await applied(onTestFinished);
      const marked = stored(server);
      const { path: dir, remove } = await temporaryDirectory();
      onTestFinished(remove);
      const edited = join(dir, "edited.yaml");
      await writeFile(edited, (await readFile(manifest, "utf8")).replace(TEXT, "Adds the city too"));
      const journal = join(dir, "second.jsonl");
      const second = await server.run(["apply", "-f", edited, "--auto-approve", "--journal", journal]);
      expect(second.code, second.stderr).toBe(0);
      expect(storedDescription(server, id)).toBe(writeMark("Adds the city too", OWNER));
      const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], { cwd: dir });
      // The write sent the old description as stored, mark and all: the check after it agrees.
      expect(undone.code, undone.stderr).toBe(0);
      expect(undone.stdout).toMatch(/^Rollback complete: 0 created, 1 updated/m);
      expectRestored(stored(server), marked, "GeoIP");
      expect((await server.run(["plan", "-f", manifest, "--detailed-exitcode"])).code).toBe(0);
    });

    it("plans the rollback as the text and the mark it puts back, never the mark's raw form", async ({
      onTestFinished,
    }) => {
      const { server, rollback } = await applied(onTestFinished);
      const { path: dir, remove } = await temporaryDirectory();
      onTestFinished(remove);
      const saved = join(dir, "rollback-plan.json");
      const dry = await rollback("--dry-run", "-o", saved);
      expect(dry.code, dry.stderr).toBe(0);
      // show prints the saved plan through the same view; markdown (a PR comment) too.
      const shown = await server.run(["show", saved]);
      const markdown = await server.run(["show", saved, "--format", "markdown"]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(markdown.code, markdown.stderr).toBe(0);
      for (const text of [dry.stdout, shown.stdout, markdown.stdout]) {
        expect(text).toContain(`description: "${TEXT}" → null`);
        expect(text).toContain(`owner: "${OWNER}" → (no mark)`);
        expect(text).not.toContain("[pcsync owner=");
      }
    });
  },
);
