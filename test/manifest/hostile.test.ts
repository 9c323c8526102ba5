// Hostile input is refused with a message (exit 1 from the CLI), never a crash or a hang: alias
// bombs, deep nesting, huge files, binary garbage, devices.

import { existsSync } from "node:fs";
import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifestSources, loadManifests } from "../../src/manifest/index.js";

function loadText(text: string) {
  const result = loadManifestSources([{ file: "hostile.yaml", text }]);
  return { result, printed: result.errors.map(formatDiagnostic) };
}

describe("hostile YAML", () => {
  // Its cost is bounded by the count it stops at (10,000 values, not 9^10), not timed here.
  it("refuses a billion-laughs alias bomb once its aliases expand to 10,000 values", () => {
    const lines = ["version: 1", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (let level = 1; level < 10; level++) {
      lines.push(
        `a${level}: &a${level} [${Array(9)
          .fill(`*a${level - 1}`)
          .join(", ")}]`,
      );
    }
    const { result, printed } = loadText(lines.join("\n"));
    expect(result.value).toBeUndefined();
    expect(printed).toEqual([
      expect.stringMatching(/^hostile\.yaml:\d+:\d+: aliases expand to more than 10000 values/),
    ]);
  });

  it("refuses an alias that contains itself", () => {
    const { printed } = loadText("version: 1\nprojects: &p\n  '1': *p\n");
    expect(printed).toEqual([
      'hostile.yaml:3:8: alias "*p" refers to a value that contains it; remove the cycle',
    ]);
  });

  it("refuses deep block nesting at the level that is too deep", () => {
    const text = Array.from({ length: 40 }, (_, level) => `${" ".repeat(level * 2)}k${level}:`).join("\n");
    const { printed } = loadText(`${text} 1\n`);
    expect(printed).toEqual([
      expect.stringMatching(/^hostile\.yaml:34:\d+: nesting is deeper than 32 levels/),
    ]);
  });

  it.each([
    ["flow sequences", "[".repeat(100_000)],
    ["flow mappings", `${"{a: ".repeat(50_000)}1${"}".repeat(50_000)}`],
    ["compact sequences", `${"- ".repeat(100_000)}x`],
  ])("refuses deeply nested %s without crashing", (_name, text) => {
    const { result, printed } = loadText(text);
    expect(result.value).toBeUndefined();
    expect(printed.length).toBeGreaterThan(0);
    expect(printed.length).toBeLessThanOrEqual(101);
    expect(printed[0]).toMatch(/^hostile\.yaml:\d+:\d+: /);
  });

  it("caps the errors of a garbage file", () => {
    const { printed } = loadText(
      `version: 1\n${Array.from({ length: 3000 }, (_, index) => `bad${index}: 1`).join("\n")}`,
    );
    expect(printed).toHaveLength(101);
    expect(printed.at(-1)).toMatch(/2900 more errors not shown; fix the ones above first$/);
  });
});

describe("hostile files", () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "pcsync-hostile-"));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function loadBytes(name: string, bytes: Uint8Array | string) {
    await writeFile(join(directory, name), bytes);
    const result = await loadManifests([name], { env: {}, cwd: directory });
    return result.errors.map(formatDiagnostic);
  }

  it("refuses a file over the size limit without reading it", async () => {
    // A sparse file: 65 MiB long, no blocks written. The limit itself is tested in large-manifests.
    const handle = await open(join(directory, "huge.yaml"), "w");
    await handle.truncate(65 * 1024 * 1024);
    await handle.close();
    const result = await loadManifests(["huge.yaml"], { env: {}, cwd: directory });
    expect(result.errors.map(formatDiagnostic)).toEqual([
      expect.stringMatching(
        /^huge\.yaml: file is 68157440 bytes, over the 64 MiB limit for one manifest file; split it/,
      ),
    ]);
  });

  it("refuses binary garbage", async () => {
    const bytes = Uint8Array.from({ length: 4096 }, (_, index) => (index * 7919) % 256);
    expect(await loadBytes("garbage.yaml", bytes)).toEqual([
      "garbage.yaml: file is binary (it contains NUL bytes), not YAML text",
    ]);
  });

  it("refuses text that is not UTF-8", async () => {
    expect(await loadBytes("latin1.yaml", Uint8Array.from([0x76, 0x3a, 0x20, 0xe9, 0x0a]))).toEqual([
      "latin1.yaml: file is not valid UTF-8 text; save it as UTF-8",
    ]);
  });

  it("refuses UTF-16 with a hint", async () => {
    expect(await loadBytes("utf16.yaml", Uint8Array.from([0xff, 0xfe, 0x76, 0x00]))).toEqual([
      "utf16.yaml: file is UTF-16 text; save it as UTF-8",
    ]);
  });

  it("accepts a UTF-8 byte-order mark", async () => {
    expect(await loadBytes("bom.yaml", "\uFEFFversion: 1\n")).toEqual([]);
  });

  it.skipIf(!existsSync("/dev/zero"))("refuses an endless device instead of reading it", async () => {
    const result = await loadManifests(["/dev/zero"], { env: {}, cwd: directory });
    expect(result.errors.map(formatDiagnostic)).toEqual([
      "/dev/zero: not a regular file; give a YAML manifest file or a directory of them",
    ]);
  });
});
