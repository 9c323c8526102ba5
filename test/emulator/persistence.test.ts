// The data file: created, reloaded, always valid JSON on disk, and durable before a write is answered.

import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataFileError, DEV_KEY_LABEL, startEmulator } from "../../src/emulator/index.js";
import { startTestEmulator } from "../support/emulator.js";
import { durableState } from "../support/emulator-data.js";
import { obj } from "../support/http-client.js";

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "pcsync-emulator-"));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function readJson(file: string): Promise<Record<string, unknown>> {
  return obj(JSON.parse(await readFile(file, "utf8")));
}

describe("data file", () => {
  it("is created with the example data and the generated key, and reloaded with the same key", async () => {
    const file = join(directory, "state.json");
    const first = await startEmulator({ dataFile: file });
    const onDisk = await readJson(file);
    expect(onDisk.version).toBe(1);
    expect(onDisk.keys).toEqual([{ key: first.devKey, scopes: ["*"], projects: "*", label: DEV_KEY_LABEL }]);
    await first.close();
    const second = await startEmulator({ dataFile: file });
    expect(second.devKey).toBe(first.devKey);
    await second.close();
  });

  it("keeps changes across restarts, and ids keep counting", async () => {
    const file = join(directory, "state.json");
    const first = await startTestEmulator({ dataFile: file });
    expect(
      (await first.post("/api/projects/3/plugin_configs", { plugin: 7, order: 1, name: "kept" })).status,
    ).toBe(201);
    expect((await first.delete("/api/projects/1/plugin_configs/2")).status).toBe(204);
    await first.emulator.close();

    const second = await startTestEmulator({ dataFile: file });
    const kept = obj((await second.get("/api/projects/3/plugin_configs/6")).body);
    expect(kept).toMatchObject({ name: "kept", plugin: 7 });
    expect(obj((await second.get("/api/projects/1/plugin_configs/2")).body).deleted).toBe(true);
    expect(obj((await second.post("/api/projects/3/plugin_configs", { plugin: 7, order: 2 })).body).id).toBe(
      7,
    );
  });

  it("has a write on disk by the time it is answered", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    await client.patch("/api/projects/1/plugin_configs/1", { name: "renamed" });
    const { records } = await durableState(file);
    expect(records.find((record) => record.id === 1)?.name).toBe("renamed");
  });

  it("is valid JSON at every moment while many writes land, and leaves no temporary files", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        // Throws (failing the test) if a reader ever sees a torn file.
        JSON.parse(await readFile(file, "utf8"));
        reads += 1;
      }
    })();
    await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        client.post("/api/projects/3/plugin_configs", { plugin: 1, order: index, name: `n${index}` }),
      ),
    );
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    await client.emulator.close();
    expect(((await readJson(file)).records as unknown[]).length).toBe(105);
    expect(await readdir(directory)).toEqual(["state.json"]);
  });

  it("removes temporary files a killed emulator left behind, the snapshot's and the journal header's", async () => {
    const file = join(directory, "state.json");
    await writeFile(join(directory, ".state.json.1234.7.tmp"), '{"version": 1, "plu');
    // The journal (.state.json.journal) has its header written through a temporary file of its own.
    await writeFile(join(directory, "..state.json.journal.1234.8.tmp"), '{"snapsh');
    // Another file's temporary file is not the emulator's to remove.
    await writeFile(join(directory, ".other.json.1234.9.tmp"), "{");
    const emulator = await startEmulator({ dataFile: file });
    await emulator.close();
    expect((await readdir(directory)).sort()).toEqual([".other.json.1234.9.tmp", "state.json"]);
  });

  it("refuses to start on a file that is not valid data, naming the problem", async () => {
    const file = join(directory, "state.json");
    await writeFile(file, "{ not json");
    await expect(startEmulator({ dataFile: file })).rejects.toThrow(DataFileError);
    await expect(startEmulator({ dataFile: file })).rejects.toThrow(/is not valid JSON/);
    await writeFile(file, JSON.stringify({ version: 1, plugins: [], projects: [{ id: "one", name: "x" }] }));
    await expect(startEmulator({ dataFile: file })).rejects.toThrow("data.projects[0].id must be an integer");
    await writeFile(file, JSON.stringify({ version: 2 }));
    await expect(startEmulator({ dataFile: file })).rejects.toThrow(/data.version must be 1/);
  });

  it("snapshot() is a deep copy", async () => {
    const client = await startTestEmulator();
    const snapshot = client.emulator.snapshot();
    const first = snapshot.records[0];
    if (first) first.name = "changed in the copy";
    expect(client.emulator.snapshot().records[0]?.name).toBe("GeoIP");
  });
});
