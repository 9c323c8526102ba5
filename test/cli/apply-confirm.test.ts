// `apply` on a terminal asks "Apply N changes? (yes/no)" after the plan, as Terraform does: only
// "yes" writes; anything else, or the end of stdin, cancels with exit 1 and nothing changed. A
// saved plan, --auto-approve and --dry-run never ask, and never read stdin (so CI cannot hang on
// it); with a stdin that is not a terminal and none of them, apply refuses before reading anything.
// Runs the CLI in-process against an in-process emulator.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo, GivenIo } from "../../src/cli/cli-io.js";
import { runCli } from "../../src/cli/program.js";
import { exampleData, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { captureStreams } from "../support/capture.js";

const KEY = "phx_confirm_test_key_0123456789";
let emulator: RunningEmulator;
let directory: string;
let manifestCount = 0;

beforeAll(async () => {
  emulator = await startEmulator({
    profile: "seed",
    data: exampleData(),
    keys: [{ key: KEY, scopes: null, projects: "*" }],
  });
  directory = await mkdtemp(join(tmpdir(), "pcsync-confirm-"));
});
afterAll(async () => {
  await emulator.close();
  await rm(directory, { recursive: true, force: true });
});

/** A manifest that creates `names` in project 3 (empty in the example data), each test its own. */
async function manifestCreating(...names: string[]): Promise<string> {
  const path = join(directory, `m${++manifestCount}.yaml`);
  const configs = names.map((name) => `        - { name: "${name}", plugin: 2 }`).join("\n");
  await writeFile(path, `version: 1\nprojects:\n  "3":\n    plugin_configs:\n      configs:\n${configs}\n`);
  return path;
}

/** A terminal on stdin that the test types into; `reads` counts what apply asked of it. */
class FakeTerminal extends PassThrough {
  readonly isTTY = true;
  reads = 0;

  override _read(size: number): void {
    this.reads += 1;
    super._read(size);
  }
}

/** A stdin that is not a terminal and never ends: reading it would hang the test. */
function endlessPipe(): Readable & { isTTY: boolean; reads: number } {
  const stream = new Readable({
    read() {
      stream.reads += 1;
    },
  }) as Readable & { isTTY: boolean; reads: number };
  stream.isTTY = false;
  stream.reads = 0;
  return stream;
}

async function run(args: string[], stdin: CliIo["stdin"], onQuestion?: () => void) {
  const streams = captureStreams();
  streams.stderr.on("data", () => {
    if (onQuestion !== undefined && streams.text().stderr.includes("(yes/no) ")) {
      const answer = onQuestion;
      onQuestion = undefined;
      answer();
    }
  });
  const io: GivenIo = {
    stdout: streams.stdout,
    stderr: streams.stderr,
    env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY },
    cwd: directory,
    ...(stdin === undefined ? {} : { stdin }),
  };
  const code = await runCli(args, io);
  return { code, ...streams.text() };
}

async function namesInProject3(): Promise<string[]> {
  const response = await fetch(`${emulator.url}/api/projects/3/plugin_configs/`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const body = (await response.json()) as { results: { name: string }[] };
  return body.results.map((record) => record.name);
}

describe.sequential("apply on a terminal", () => {
  it('shows the plan, asks, and applies on "yes"', async () => {
    const manifest = await manifestCreating("Yes A", "Yes B");
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest], terminal, () => terminal.write("yes\n"));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('+ create "Yes A"');
    expect(result.stderr).toContain(
      `pcsync will make the changes above on ${emulator.url}. Only "yes" goes ahead.\nApply 2 changes? (yes/no) `,
    );
    // The question comes after the plan, and the writes after the answer.
    expect(result.stdout.indexOf("Plan:")).toBeGreaterThan(-1);
    expect(await namesInProject3()).toEqual(expect.arrayContaining(["Yes A", "Yes B"]));
  });

  it.each([
    ["no", "no\n"],
    ["YES in capitals", "YES\n"],
    ["an empty line", "\n"],
    ["y", "y\n"],
  ])('cancels on %s: exit 1, "Apply cancelled; nothing was changed."', async (_what, typed) => {
    const manifest = await manifestCreating(`Declined ${manifestCount}`);
    const before = await namesInProject3();
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest], terminal, () => terminal.write(typed));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /Apply 1 change\? \(yes\/no\) pcsync: Apply cancelled; nothing was changed\.\n$/,
    );
    expect(await namesInProject3()).toEqual(before);
  });

  it("cancels when stdin ends before an answer (Ctrl-D)", async () => {
    const manifest = await manifestCreating("Ended");
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest], terminal, () => terminal.end());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\(yes\/no\) \npcsync: Apply cancelled; nothing was changed\.\n$/);
    expect(await namesInProject3()).not.toContain("Ended");
  });

  it("refuses (exit 3) when a record it changes was changed while it waited for the answer", async () => {
    const manifest = join(directory, "update-geoip.yaml");
    await writeFile(
      manifest,
      'version: 1\nprojects:\n  "2":\n    plugin_configs:\n      configs:\n        - { name: GeoIP, plugin: 1, enabled: false }\n',
    );
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest], terminal, () => {
      // Someone else edits the record while the user reads the plan.
      void fetch(`${emulator.url}/api/projects/2/plugin_configs/5/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "edited meanwhile" }),
      }).then(() => terminal.write("yes\n"));
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("the remote state changed while apply waited for your answer:");
    expect(result.stderr).toContain("Nothing was changed. Run apply again");
    const record = await fetch(`${emulator.url}/api/projects/2/plugin_configs/5/`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(await record.json()).toMatchObject({ enabled: true, description: "edited meanwhile" });
  });

  it("refuses --format json without --auto-approve: there is no plan to say yes to", async () => {
    const manifest = await manifestCreating("Json");
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest, "--format", "json"], terminal);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toContain("add --auto-approve");
    expect(terminal.reads).toBe(0);
  });
});

describe.sequential("rollback on a terminal", () => {
  it('cancels on "no" with its own words: "Rollback cancelled; nothing was changed."', async () => {
    const manifest = await manifestCreating("Undo Me");
    const journal = join(directory, "undo-me.jsonl");
    const applied = await run(["apply", "-f", manifest, "--auto-approve", "--journal", journal], undefined);
    expect(applied.code, applied.stderr).toBe(0);
    const terminal = new FakeTerminal();
    const result = await run(["rollback", "--journal", journal], terminal, () => terminal.write("no\n"));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /Roll back with 1 change\? \(yes\/no\) pcsync: Rollback cancelled; nothing was changed\.\n$/,
    );
    expect(await namesInProject3()).toContain("Undo Me");
  });
});

describe.sequential("apply that does not ask", () => {
  it("--auto-approve applies on a terminal without reading it", async () => {
    const manifest = await manifestCreating("Auto");
    const terminal = new FakeTerminal();
    const result = await run(["apply", "-f", manifest, "--auto-approve"], terminal);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("(yes/no)");
    expect(terminal.reads).toBe(0);
    expect(await namesInProject3()).toContain("Auto");
  });

  it("without a terminal, refuses (exit 1) before reading anything, naming the three ways on", async () => {
    const manifest = await manifestCreating("Piped");
    const requestsBefore = emulator.requestLog.length;
    for (const stdin of [endlessPipe(), undefined]) {
      const result = await run(["apply", "-f", manifest], stdin);
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toContain("stdin is not a terminal to ask on");
      // The saved plan's way is not one for a rollout, which apply --plan refuses.
      for (const way of [
        "on a terminal",
        "--auto-approve",
        "apply --plan FILE",
        "rollout: takes --auto-approve",
      ]) {
        expect(result.stderr).toContain(way);
      }
      expect(result.stderr).not.toContain("(yes/no)");
      if (stdin !== undefined) expect(stdin.reads).toBe(0);
    }
    // Nothing read: not the manifest (a missing one is not reported), not the key file, no request.
    const unread = await run(
      ["apply", "-f", join(directory, "missing.yaml"), "--api-key-file", join(directory, "no-key")],
      endlessPipe(),
    );
    expect(unread.code).toBe(1);
    expect(unread.stderr).toContain("stdin is not a terminal to ask on");
    expect(unread.stderr).not.toContain("missing.yaml");
    expect(emulator.requestLog.length).toBe(requestsBefore);
    expect(await namesInProject3()).not.toContain("Piped");
    // --auto-approve on the same pipe applies, and never reads it.
    const pipe = endlessPipe();
    const approved = await run(["apply", "-f", manifest, "--auto-approve"], pipe);
    expect(approved.code).toBe(0);
    expect(pipe.reads).toBe(0);
    expect(await namesInProject3()).toContain("Piped");
  });

  it("a saved plan and --dry-run do not ask", async () => {
    const manifest = await manifestCreating("Saved");
    const planFile = join(directory, "saved.json");
    expect((await run(["plan", "-f", manifest, "-o", planFile], undefined)).code).toBe(0);
    const terminal = new FakeTerminal();
    const dry = await run(["apply", "-f", manifest, "--dry-run"], terminal);
    expect(dry.code).toBe(0);
    expect(await namesInProject3()).not.toContain("Saved");
    const saved = await run(["apply", "--plan", planFile], terminal);
    expect(saved.code).toBe(0);
    for (const result of [dry, saved]) expect(result.stderr).not.toContain("(yes/no)");
    expect(terminal.reads).toBe(0);
    expect(await namesInProject3()).toContain("Saved");
  });
});
