// E2E: the owner mark seen the same way by every command that reads a description after an apply
// of an `owner:` manifest: resume from its journal, and export (which writes the owner back).

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILE_NAMES } from "../../src/emulator/index.js";
import { EXAMPLES } from "../support/paths.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const OWNERS = join(EXAMPLES, "owners");

describe.concurrent.each(PROFILE_NAMES)("owner marks on %s", (profile) => {
  it("resumes a run of an owner: plan killed before any answer: every write is found done", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const plan = join(dir, "plan.json");
    const manifest = join(OWNERS, "data-platform.yaml");
    expect((await server.run(["plan", "-f", manifest, "-o", plan])).code).toBe(0);
    const journal = join(dir, "apply.jsonl");
    const applied = await server.run(["apply", "--plan", plan, "--auto-approve", "--journal", journal]);
    expect(applied.code, applied.stderr).toBe(0);
    // As a run killed after its writes were sent, before any answer came: intents only.
    const lines = (await readFile(journal, "utf8")).split("\n");
    await writeFile(
      journal,
      lines
        .filter((line) => line.includes('"type":"header"') || line.includes('"type":"intent"'))
        .map((line) => `${line}\n`)
        .join(""),
    );
    const resumed = await server.run([
      "apply",
      "--plan",
      plan,
      "--resume",
      "--journal",
      journal,
      "--auto-approve",
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/stale|changed since/);
    expect((await server.run(["plan", "-f", manifest, "--detailed-exitcode"])).code).toBe(0);
  });
});
