import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { loadManifestSources, loadManifests } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { type ReadProgressCounts, readAndPlanProjects } from "../../src/read/read-and-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";

const KEY = "phx_read_and_plan_test_key";

describe("readAndPlanProjects (projects planned as their lists arrive)", () => {
  let emulator: RunningEmulator;
  let client: ApiClient;
  beforeAll(async () => {
    emulator = await startEmulator({ keys: [{ key: KEY, scopes: null, projects: "*" }] });
    client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it("makes exactly the plan that computePlan makes of the same lists, reading each list once", async () => {
    const loaded = await loadManifests(["examples"], { env: {}, cwd: process.cwd() });
    const desired = loaded.value;
    if (!desired) throw new Error(JSON.stringify(loaded.errors));
    emulator.resetRequestLog();
    const progress: ReadProgressCounts[] = [];
    const pipelined = await readAndPlanProjects(client, desired, {
      concurrency: 3,
      onProgress: (counts) => progress.push(counts),
    });
    const lists = emulator.requestLog.length;
    expect(lists).toBe(listsToPlan(desired).length);
    const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 3 });
    expect(pipelined.current).toEqual(current);
    expect(pipelined.plan).toEqual(computePlan(desired, current).plan);
    expect(pipelined.plan?.summary.create).toBeGreaterThan(0);

    // Progress: one report per list read, counting up to every list and every project.
    const projects = new Set(desired.families.map((family) => family.project)).size;
    expect(progress.map((counts) => counts.listsDone)).toEqual(progress.map((_, index) => index + 1));
    expect(progress.at(-1)).toEqual({ listsDone: lists, lists, projectsDone: projects, projects });
    const projectCounts = progress.map((counts) => counts.projectsDone);
    expect(projectCounts).toEqual([...projectCounts].sort((a, b) => a - b));
  });

  it("plans with lists it is given as it would with those lists read, and reads only the others", async () => {
    const loaded = await loadManifests(["examples"], { env: {}, cwd: process.cwd() });
    const desired = loaded.value;
    if (!desired) throw new Error(JSON.stringify(loaded.errors));
    const refs = listsToPlan(desired);
    const current = await readCurrentState(client, refs, { concurrency: 3 });
    // Every other list is given (a project may then have every list given: planned at once).
    const known = { families: current.families.filter((_, index) => index % 2 === 1) };
    emulator.resetRequestLog();
    const result = await readAndPlanProjects(client, desired, { concurrency: 3, known });
    const read = emulator.requestLog.map((entry) => entry.path.split("?")[0]);
    expect(read.length).toBe(refs.length - known.families.length);
    for (const family of known.families)
      expect(read).not.toContain(`/api/projects/${family.project}/${family.family}/`);
    expect(result.plan).toEqual(computePlan(desired, current).plan);
    const byKey = (state: typeof current) =>
      [...state.families].sort((a, b) =>
        `${a.project}/${a.family}`.localeCompare(`${b.project}/${b.family}`),
      );
    expect(byKey(result.current)).toEqual(byKey(current));
  });
});

describe("a project list the service answers 404", () => {
  it("is explained as the project the manifest names, also for @current (an @ the path keeps as it is)", async () => {
    // The key's only project does not exist: @current names no project.
    const emulator = await startEmulator({ keys: [{ key: KEY, scopes: null, projects: [99] }] });
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    try {
      const loaded = loadManifestSources([
        {
          file: "m.yaml",
          text: 'version: 1\nprojects:\n  "@current":\n    plugin_configs:\n      configs: []\n',
        },
      ]);
      if (!loaded.value) throw new Error(JSON.stringify(loaded.errors));
      await expect(readAndPlanProjects(client, loaded.value, { concurrency: 1 })).rejects.toMatchObject({
        code: "project_not_found",
        message: expect.stringContaining("m.yaml:3"),
      });
    } finally {
      await client.close();
      await emulator.close();
    }
  });
});
