// Many clients at once: the state must stay consistent and every write must be kept.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestEmulator } from "../support/emulator.js";
import { durableState } from "../support/emulator-data.js";
import { obj, page } from "../support/http-client.js";

describe("concurrency", () => {
  it("gives 200 concurrent creates 200 distinct records, in memory and in the data file", async () => {
    const directory = await mkdtemp(join(tmpdir(), "pcsync-emulator-"));
    try {
      const file = join(directory, "state.json");
      const client = await startTestEmulator({ dataFile: file });
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          client.post("/api/projects/3/plugin_configs/", {
            plugin: 1 + (index % 8),
            order: index,
            name: `c${index}`,
          }),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(Array(200).fill(201));
      const ids = replies.map((reply) => obj(reply.body).id);
      expect(new Set(ids).size).toBe(200);
      const listed = page((await client.get("/api/projects/3/plugin_configs/?limit=1000")).body);
      expect(listed.count).toBe(200);
      expect(new Set(listed.results.map((record) => record.name)).size).toBe(200);
      const onDisk = await durableState(file);
      expect(onDisk.records.length).toBe(205);
      expect(onDisk.nextIds).toEqual({ record: 206 });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("applies 200 concurrent updates to one record without losing any (last write wins)", async () => {
    const client = await startTestEmulator();
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.patch("/api/projects/1/plugin_configs/1", { order: index }),
      ),
    );
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    const stamps = replies.map((reply) => String(obj(reply.body).updated_at));
    expect(new Set(stamps).size).toBe(200);
  });
});
