// Which manifest a long-running watch plans with, against real files and the real loader on a
// clock the test moves: a change is used only once its content has stayed the same for the settle
// time; until then the last settled version is, and the log says so once.

import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type LoadResult, loadManifests } from "../../src/manifest/index.js";
import { digestManifestFiles, StableManifest } from "../../src/watch/stable-manifest.js";
import { createsManifest, names } from "../support/manifest-text.js";
import { temporaryDirectory } from "../support/work-dir.js";

const STABLE_MS = 10_000;

/** The names of the configs a load found (undefined: the manifest did not load). */
function configNames(result: LoadResult): string[] | undefined {
  return result.value?.families.flatMap((family) =>
    family.configs.map((config) => String(config.fields.name)),
  );
}

async function setUp(onTestFinished: (fn: () => Promise<void>) => void, paths: (dir: string) => string[]) {
  const { path, remove } = await temporaryDirectory();
  onTestFinished(remove);
  let now = 1_000_000;
  const notices: string[] = [];
  let loads = 0;
  const files = paths(path);
  const varFiles: string[] = [];
  const stable = new StableManifest(
    {
      load: () => {
        loads += 1;
        return loadManifests(files, { env: {}, cwd: path, varFiles });
      },
      digest: () => digestManifestFiles(files, varFiles, path),
    },
    { stableForMs: STABLE_MS, notice: (line) => notices.push(line), now: () => now },
  );
  return {
    path,
    stable,
    notices,
    varFiles,
    loads: () => loads,
    advance: (ms: number) => {
      now += ms;
    },
    /** What a cycle would plan with now. */
    use: async () => configNames(await stable.current()),
  };
}

const FULL = createsManifest(names("cfg", 6));
/** The first half of FULL, cut after a whole config: valid YAML, a short list. */
const HALF = FULL.slice(0, FULL.indexOf("        - name: cfg 4"));

describe("StableManifest", () => {
  it("uses the first read as read, and an unchanged manifest without loading it again", async ({
    onTestFinished,
  }) => {
    const { path, use, loads, advance, notices } = await setUp(onTestFinished, (dir) => [
      join(dir, "pcsync.yaml"),
    ]);
    await writeFile(join(path, "pcsync.yaml"), HALF);
    expect(await use()).toEqual(names("cfg", 3));
    advance(60_000);
    expect(await use()).toEqual(names("cfg", 3));
    // Rewritten with the same bytes (a ConfigMap refresh, git-sync of the same commit): no change.
    await writeFile(join(path, "pcsync.yaml"), HALF);
    advance(1);
    expect(await use()).toEqual(names("cfg", 3));
    expect(loads()).toBe(1);
    expect(notices).toEqual([]);
  });

  it("never uses the half of a writer that pauses mid-file; uses what it leaves once settled", async ({
    onTestFinished,
  }) => {
    const env = await setUp(onTestFinished, (dir) => [join(dir, "pcsync.yaml")]);
    const file = join(env.path, "pcsync.yaml");
    await writeFile(file, createsManifest(names("old", 2)));
    expect(await env.use()).toEqual(names("old", 2));
    // The writer truncates and writes half, then pauses for 5 s (longer than the old half second).
    await writeFile(file, HALF);
    env.advance(1);
    expect(await env.use()).toEqual(names("old", 2));
    expect(env.stable.pending).toBe(true);
    env.advance(5_000);
    expect(await env.stable.check()).toBe(false);
    expect(await env.use()).toEqual(names("old", 2));
    await writeFile(file, FULL);
    // The window starts again from the first read of the content the writer left: 9.999 s after
    // it, that content is not used yet.
    env.advance(1_000);
    expect(await env.stable.check()).toBe(false);
    env.advance(STABLE_MS - 1);
    expect(await env.stable.check()).toBe(false);
    expect(await env.use()).toEqual(names("old", 2));
    env.advance(1);
    expect(await env.stable.check()).toBe(true);
    expect(await env.use()).toEqual(names("cfg", 6));
    expect(env.stable.pending).toBe(false);
    expect(env.notices).toEqual([
      "the manifest changed; planning with the last settled version until its content stays the same for 10 s",
      "the manifest changed; using the new version (unchanged for 10 s)",
    ]);
  });

  it("a change that reverts to the settled content is never used, and a later change is told again", async ({
    onTestFinished,
  }) => {
    const env = await setUp(onTestFinished, (dir) => [join(dir, "pcsync.yaml")]);
    const file = join(env.path, "pcsync.yaml");
    await writeFile(file, FULL);
    expect(await env.use()).toEqual(names("cfg", 6));
    await writeFile(file, HALF);
    expect(await env.use()).toEqual(names("cfg", 6));
    await writeFile(file, FULL);
    env.advance(STABLE_MS * 3);
    expect(await env.use()).toEqual(names("cfg", 6));
    expect(env.stable.pending).toBe(false);
    expect(env.stable.nextCheckAt()).toBeUndefined();
    await writeFile(file, HALF);
    expect(await env.use()).toEqual(names("cfg", 6));
    expect(env.notices).toHaveLength(2);
    expect(env.loads()).toBe(1);
  });

  it("a file deleted and re-created, or deleted for good, in a directory of several files", async ({
    onTestFinished,
  }) => {
    const env = await setUp(onTestFinished, (dir) => [join(dir, "manifests")]);
    const dir = join(env.path, "manifests");
    await mkdir(dir);
    const project = (id: string, name: string) =>
      `version: 1\nprojects:\n  "${id}":\n    plugin_configs:\n      configs:\n        - { name: ${name}, plugin: 1 }\n`;
    await writeFile(join(dir, "a.yaml"), project("1", "one"));
    await writeFile(join(dir, "b.yaml"), project("2", "two"));
    expect(await env.use()).toEqual(["one", "two"]);
    // Deleted and re-created with the same bytes: gone for a moment, then back: nothing changed.
    await rm(join(dir, "b.yaml"));
    env.advance(2_000);
    expect(await env.use()).toEqual(["one", "two"]);
    await writeFile(join(dir, "b.yaml"), project("2", "two"));
    env.advance(STABLE_MS);
    expect(await env.use()).toEqual(["one", "two"]);
    expect(env.stable.pending).toBe(false);
    // A new file in the directory is a change like any other.
    await writeFile(join(dir, "c.yaml"), project("3", "three"));
    expect(await env.use()).toEqual(["one", "two"]);
    env.advance(STABLE_MS);
    expect(await env.use()).toEqual(["one", "two", "three"]);
    // Deleted for good: once that has lasted the settle time, that is the manifest.
    await rm(join(dir, "b.yaml"));
    expect(await env.use()).toEqual(["one", "two", "three"]);
    env.advance(STABLE_MS);
    expect(await env.use()).toEqual(["one", "three"]);
  });

  it("a manifest renamed into place is one change; a var file's change is a change too", async ({
    onTestFinished,
  }) => {
    const env = await setUp(onTestFinished, (dir) => [join(dir, "pcsync.yaml")]);
    const file = join(env.path, "pcsync.yaml");
    const varFile = join(env.path, "vars.yaml");
    env.varFiles.push(varFile);
    await writeFile(varFile, "NAME: first\n");
    await writeFile(
      file,
      "version: 1\nprojects:\n  \"1\":\n    plugin_configs:\n      configs:\n        - { name: '${NAME}', plugin: 1 }\n",
    );
    expect(await env.use()).toEqual(["first"]);
    await writeFile(varFile, "NAME: second\n");
    expect(await env.use()).toEqual(["first"]);
    env.advance(STABLE_MS);
    expect(await env.use()).toEqual(["second"]);
    await writeFile(`${file}.tmp`, createsManifest(["renamed"]));
    await rename(`${file}.tmp`, file);
    expect(await env.use()).toEqual(["second"]);
    env.advance(STABLE_MS);
    expect(await env.use()).toEqual(["renamed"]);
  });

  it("asks for one early cycle per settled change: a load that fails waits for the next interval", async ({
    onTestFinished,
  }) => {
    const { path, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(path, "pcsync.yaml");
    let now = 0;
    let failing = false;
    const stable = new StableManifest(
      {
        load: async () => {
          if (failing) throw new Error("the disk went away");
          return loadManifests([file], { env: {}, cwd: path });
        },
        digest: () => digestManifestFiles([file], [], path),
      },
      { stableForMs: STABLE_MS, notice: () => undefined, now: () => now },
    );
    await writeFile(file, FULL);
    await stable.current();
    await writeFile(file, HALF);
    await stable.current();
    now += STABLE_MS;
    expect(await stable.check()).toBe(true);
    failing = true;
    await expect(stable.current()).rejects.toThrow("the disk went away");
    expect([stable.nextCheckAt(), await stable.check()]).toEqual([undefined, false]);
    // The next cycle, an interval later, takes it up.
    failing = false;
    now += 60_000;
    expect(configNames(await stable.current())).toEqual(names("cfg", 3));
  });

  it("for --once, uses the files as read, without a digest", async () => {
    let digests = 0;
    const result = { value: undefined, errors: [], warnings: [], files: ["pcsync.yaml"] };
    const stable = new StableManifest(
      {
        load: async () => result,
        digest: async () => `${++digests}`,
      },
      { stableForMs: STABLE_MS, once: true, notice: () => undefined },
    );
    expect(await stable.current()).toBe(result);
    expect(digests).toBe(0);
  });

  it("with a settle of 0, uses each version as read", async ({ onTestFinished }) => {
    const { path, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(path, "pcsync.yaml");
    const notices: string[] = [];
    const stable = new StableManifest(
      {
        load: () => loadManifests([file], { env: {}, cwd: path }),
        digest: () => digestManifestFiles([file], [], path),
      },
      { stableForMs: 0, notice: (line) => notices.push(line) },
    );
    await writeFile(file, FULL);
    expect(configNames(await stable.current())).toEqual(names("cfg", 6));
    await writeFile(file, HALF);
    expect(configNames(await stable.current())).toEqual(names("cfg", 3));
    expect(notices).toEqual(["the manifest changed; using the new version (as read: --manifest-settle 0)"]);
  });

  // The guarantee as a property: whatever a writer does and whenever cycles and checks come, a
  // version a cycle starts to use (after the first) is on disk, and every read of the watcher for
  // at least the settle time before found it. The reader here is the model of the files (the real
  // reads and the digest are tested above), so that many histories run in little time.
  it("starts to use no version that its reads did not find the same for the whole settle time", () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("write" as const), version: fc.nat(3) }),
      fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: STABLE_MS * 1.5 }) }),
      fc.record({ kind: fc.constant("cycle" as const) }),
      fc.record({ kind: fc.constant("check" as const) }),
    );
    return fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        let now = 0;
        let onDisk = 0;
        const reads: { at: number; version: number }[] = [];
        const stable = new StableManifest(
          {
            load: async () => ({ value: undefined, errors: [], warnings: [], files: [String(onDisk)] }),
            digest: async () => {
              reads.push({ at: now, version: onDisk });
              return `version ${onDisk}`;
            },
          },
          { stableForMs: STABLE_MS, notice: () => undefined, now: () => now },
        );
        await stable.current();
        let used = 0;
        for (const item of steps) {
          if (item.kind === "write") onDisk = item.version;
          else if (item.kind === "wait") now += item.ms;
          else if (item.kind === "check") await stable.check();
          else {
            const version = Number((await stable.current()).files[0]);
            if (version === used) continue;
            expect(version).toBe(onDisk);
            const window = reads.filter((read) => read.at >= now - STABLE_MS);
            const before = reads.filter((read) => read.at <= now - STABLE_MS).at(-1);
            expect(before?.version).toBe(version);
            expect(window.every((read) => read.version === version)).toBe(true);
            used = version;
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
