// Group commit of the data file: writes that arrive during a commit share the next one, every
// answer waits until what it shows is durable, and a failing sync or a full disk fails every write
// of its batch the way a failed write always has. (How many syncs a batch saves is a cost, not a
// behaviour: bench's apply-10000-data prints it as time beside the in-memory emulator.)

import type { FileHandle } from "node:fs/promises";
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DataFileError, exampleData, startEmulator } from "../../src/emulator/index.js";
import { journalFileOf } from "../../src/emulator/persistence.js";
import { startTestEmulator } from "../support/emulator.js";
import { durableState } from "../support/emulator-data.js";
import { obj } from "../support/http-client.js";
import { runCliInProcess } from "../support/in-process.js";
import { waitFor } from "../support/wait-for.js";

type SyncStep = { kind: "hold"; until: Promise<void> } | { kind: "fail"; error: Error };

// Every sync of a file the emulator opens goes through here, to be held or failed on demand.
const disk = vi.hoisted(() => ({
  writes: 0,
  nextSyncs: [] as SyncStep[],
  writeFailure: undefined as Error | undefined,
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const open = async (...args: Parameters<typeof real.open>): Promise<FileHandle> => {
    const handle = await real.open(...args);
    const instrument = (method: "sync" | "datasync") => {
      const original = handle[method].bind(handle);
      handle[method] = async () => {
        const step = disk.nextSyncs.shift();
        if (step?.kind === "hold") await step.until;
        if (step?.kind === "fail") throw step.error;
        return original();
      };
    };
    instrument("sync");
    instrument("datasync");
    const writeFileOriginal = handle.writeFile.bind(handle);
    handle.writeFile = async (...writeArgs: Parameters<FileHandle["writeFile"]>) => {
      disk.writes += 1;
      if (disk.writeFailure) throw disk.writeFailure;
      return writeFileOriginal(...writeArgs);
    };
    return handle;
  };
  return { ...real, open, default: { ...real, open } };
});

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "pcsync-group-commit-"));
  disk.writes = 0;
  disk.nextSyncs = [];
  disk.writeFailure = undefined;
});

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  disk.nextSyncs = [];
  disk.writeFailure = undefined;
  await rm(directory, { recursive: true, force: true });
});

const gates: Array<() => void> = [];

/** A held sync, released by `open` (and at the latest when the test ends, pass or fail). */
function gate(): { until: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const until = new Promise<void>((resolve) => {
    open = resolve;
  });
  gates.push(open);
  return { until, open };
}

const ENOSPC = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
const EIO = () => Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });

describe("group commit", () => {
  it("answers the writes that arrive during a commit only once the commit after it made them durable", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    const held = gate();
    disk.nextSyncs.push({ kind: "hold", until: held.until });
    const answered: string[] = [];
    const first = client.patch("/api/projects/1/plugin_configs/1", { name: "first" }).then((reply) => {
      answered.push("first");
      return reply;
    });
    await waitFor(() => disk.nextSyncs.length === 0, "the first commit to reach its sync");
    const batch = Array.from({ length: 10 }, (_, index) =>
      client.patch("/api/projects/1/plugin_configs/2", { order: 100 + index }).then((reply) => {
        answered.push(`batch ${index}`);
        return reply;
      }),
    );
    await waitFor(
      () => client.emulator.snapshot().records.find((record) => record.id === 2)?.order === 109,
      "the ten writes to be made in memory",
    );
    expect(answered).toEqual([]);
    held.open();
    const replies = await Promise.all([first, ...batch]);
    expect(replies.map((reply) => reply.status)).toEqual(Array(11).fill(200));
    expect(answered[0]).toBe("first");
    const onDisk = await durableState(file);
    expect(onDisk.records.find((record) => record.id === 2)?.order).toBe(109);
  });

  it("answers a read that saw a write still being committed only once that write is durable", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    const held = gate();
    disk.nextSyncs.push({ kind: "hold", until: held.until });
    let released = false;
    const write = client.patch("/api/projects/1/plugin_configs/1", { name: "not yet durable" });
    await waitFor(
      () => client.emulator.snapshot().records.find((record) => record.id === 1)?.name === "not yet durable",
      "the write to be made in memory",
    );
    let settled = false;
    const read = client.get("/api/projects/1/plugin_configs/1").then((reply) => {
      settled = true;
      return { reply, released };
    });
    // Requests that fail before reading any state are not held: twenty round trips after the read
    // was sent give an unheld read ample time to have come back.
    for (let round = 0; round < 20; round += 1) {
      expect((await client.get("/api/projects/", { key: null })).status).toBe(401);
    }
    expect(settled).toBe(false);
    released = true;
    held.open();
    const { reply, released: answeredAfterRelease } = await read;
    expect(answeredAfterRelease).toBe(true);
    expect(obj(reply.body).name).toBe("not yet durable");
    expect((await write).status).toBe(200);
  });

  it("fails every write of a batch whose sync fails with today's 500, then recovers with a snapshot", async () => {
    const file = join(directory, "state.json");
    const lines: string[] = [];
    const client = await startTestEmulator({ dataFile: file, log: (line) => lines.push(line) });
    const held = gate();
    disk.nextSyncs.push({ kind: "hold", until: held.until }, { kind: "fail", error: EIO() });
    const first = client.patch("/api/projects/1/plugin_configs/1", { name: "kept" });
    await waitFor(() => disk.nextSyncs.length === 1, "the first commit to reach its sync");
    const batch = Array.from({ length: 5 }, (_, index) =>
      client.post("/api/projects/3/plugin_configs/", { plugin: 1, order: index, name: `lost ${index}` }),
    );
    await waitFor(() => client.emulator.snapshot().records.length === 10, "the batch to be made in memory");
    held.open();
    expect((await first).status).toBe(200);
    const failed = await Promise.all(batch);
    expect(failed.map((reply) => reply.status)).toEqual(Array(5).fill(500));
    for (const reply of failed) expect(reply.body).toEqual(obj((failed[0] as { body: unknown }).body));
    expect(obj(failed[0]?.body)).toMatchObject({ type: "server_error", detail: "A server error occurred." });
    expect(lines.filter((line) => line.includes("internal error") && line.includes("EIO"))).toHaveLength(5);

    // The next write is committed as a whole snapshot: the journal's tail is not trusted after a
    // failed sync. The changes the failed batch made in memory become durable with it.
    const after = await client.patch("/api/projects/1/plugin_configs/1", { name: "after the failure" });
    expect(after.status).toBe(200);
    const onDisk = await durableState(file);
    expect(onDisk.records.find((record) => record.id === 1)?.name).toBe("after the failure");
    expect(onDisk.records).toHaveLength(10);
  });

  it("fails every write of a batch on a full disk, and keeps the last durable state loadable", async () => {
    const file = join(directory, "state.json");
    const lines: string[] = [];
    const client = await startTestEmulator({ dataFile: file, log: (line) => lines.push(line) });
    expect((await client.patch("/api/projects/1/plugin_configs/1", { name: "durable" })).status).toBe(200);
    disk.writeFailure = ENOSPC();
    const replies = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        client.patch("/api/projects/1/plugin_configs/2", { name: `on a full disk ${index}` }),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(4).fill(500));
    expect(lines.filter((line) => line.includes("internal error") && line.includes("ENOSPC"))).toHaveLength(
      4,
    );
    // Still full: the snapshot the next commit tries fails too, and leaves no temporary file.
    expect((await client.patch("/api/projects/1/plugin_configs/3", { name: "x" })).status).toBe(500);
    const names = await readdir(directory);
    expect(names.filter((name) => name.endsWith(".tmp"))).toEqual([]);
    const onDisk = await durableState(file);
    expect(onDisk.records.find((record) => record.id === 1)?.name).toBe("durable");
    disk.writeFailure = undefined;
    expect((await client.patch("/api/projects/1/plugin_configs/3", { name: "space again" })).status).toBe(
      200,
    );
    const recovered = await durableState(file);
    expect(recovered.records.find((record) => record.id === 3)?.name).toBe("space again");
    expect(recovered.records.find((record) => record.id === 2)?.name).toBe("on a full disk 3");
  });

  it("keeps the order of writes within and across batches, as memory has it", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    for (let round = 0; round < 20; round += 1) {
      const replies = await Promise.all([
        ...[1, 2, 3].flatMap((id) =>
          Array.from({ length: 3 }, (_, index) =>
            client.patch(`/api/projects/1/plugin_configs/${id}`, { order: round * 10 + index }),
          ),
        ),
        client.post("/api/projects/3/plugin_configs/", { plugin: 1, order: round, name: `r${round}` }),
        client.post("/api/projects/1/plugin_configs/1/job/", { job: { type: "Export historical events" } }),
      ]);
      expect(replies.every((reply) => reply.status < 300)).toBe(true);
    }
    const memory = client.emulator.snapshot();
    const onDisk = await durableState(file);
    expect(onDisk.records).toEqual(memory.records);
    expect(onDisk.logEntries).toEqual(memory.logEntries);
    expect(onDisk.nextIds).toEqual(memory.nextIds);
  });

  it("folds a journal grown past the snapshot's size into a new snapshot", async () => {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    const snapshotIdOf = async () => obj(JSON.parse(await readFile(file, "utf8"))).snapshotId;
    const firstId = await snapshotIdOf();
    const description = "d".repeat(990);
    for (let round = 0; round < 40; round += 1) {
      const replies = await Promise.all(
        [1, 2, 3].map((id) =>
          client.patch(`/api/projects/1/plugin_configs/${id}`, { description: `${round} ${description}` }),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(Array(3).fill(200));
    }
    expect(await snapshotIdOf()).not.toBe(firstId);
    const journal = await readFile(journalFileOf(file), "utf8");
    expect(journal.length).toBeLessThan(100 * 1024);
    expect((await durableState(file)).records).toEqual(client.emulator.snapshot().records);
  });
});

describe("the journal after a crash", () => {
  // What SIGKILL leaves: the data file and its journal as they are while the emulator runs.
  async function crashedCopy(): Promise<{ file: string; journal: string; names: string[] }> {
    const file = join(directory, "state.json");
    const client = await startTestEmulator({ dataFile: file });
    const names = Array.from({ length: 6 }, (_, index) => `after the snapshot ${index}`);
    for (const name of names)
      await client.post("/api/projects/3/plugin_configs/", { plugin: 1, order: 1, name });
    const copy = join(directory, "copy");
    await mkdir(copy);
    const copied = join(copy, "state.json");
    await copyFile(file, copied);
    await copyFile(journalFileOf(file), journalFileOf(copied));
    return { file: copied, journal: journalFileOf(copied), names };
  }

  it("is replayed on start, a torn last line skipped, and folded into the data file", async () => {
    const { file, journal, names } = await crashedCopy();
    await appendFile(journal, '{"records":[{"id":99,"fam');
    const restarted = await startEmulator({ dataFile: file });
    const listedNames = restarted.snapshot().records.map((record) => record.name);
    for (const name of names) expect(listedNames).toContain(name);
    await restarted.close();
    const onDisk = obj(JSON.parse(await readFile(file, "utf8")));
    expect((onDisk.records as { name: string }[]).map((record) => record.name)).toEqual(listedNames);
  });

  it("is ignored when the data file was replaced, and the replacement is served", async () => {
    const { file } = await crashedCopy();
    await writeFile(file, JSON.stringify(exampleData()));
    const restarted = await startEmulator({ dataFile: file });
    expect(restarted.snapshot().records).toEqual(exampleData().records);
    await restarted.close();
  });

  it("stops the start when a line in its middle is damaged, saying how to go on", async () => {
    const { file, journal } = await crashedCopy();
    const lines = (await readFile(journal, "utf8")).split("\n");
    lines[2] = "{ damaged";
    await writeFile(journal, lines.join("\n"));
    await expect(startEmulator({ dataFile: file })).rejects.toThrow(DataFileError);
    await expect(startEmulator({ dataFile: file })).rejects.toMatchObject({
      message: expect.stringMatching(/journal line 3 is not valid JSON$/),
      advice: expect.stringMatching(/^remove .*journal to start from the data file alone/),
    });
    // `pcsync serve` says what to do once: about the journal, not "remove the data file".
    const served = await runCliInProcess(["serve", "--data", file, "--port", "0"], {
      env: {},
      cwd: directory,
    });
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(
      /^pcsync: .*journal line 3 is not valid JSON; remove .*journal to start from the data file alone \(losing the writes it holds\)\n$/,
    );
    expect(served.stderr).not.toContain("example data");
  });

  it("cannot hide an unreadable data file: the start fails as before", async () => {
    const file = join(directory, "state.json");
    await mkdir(file);
    await expect(startEmulator({ dataFile: file })).rejects.toMatchObject({ code: "EISDIR" });
  });
});
