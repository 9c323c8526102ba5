// A run registers only the commands it can reach (program.ts): what it prints must not depend on
// that. A command's help alone equals its help from the whole program, and every argument list
// that could name, list or suggest another command gets them all.

import { describe, expect, it } from "vitest";
import { buildProgram, commandsReachedBy } from "../../src/cli/program.js";
import { SecretRegistry } from "../../src/redact.js";
import { captureStreams } from "../support/capture.js";
import { runCliInProcess } from "../support/in-process.js";

const ALL = (
  await buildProgram(
    { ...captureStreams(), env: {}, cwd: process.cwd(), secrets: new SecretRegistry() },
    () => undefined,
  )
).commands.map((command) => command.name());

async function run(args: string[]) {
  return runCliInProcess(args, { env: {}, cwd: process.cwd() });
}

describe("commands registered for a run", () => {
  it.each(ALL)(
    "pcsync %s --help, with that command alone, equals its help from the whole program",
    async (name) => {
      const alone = await run([name, "--help"]);
      // completion describes every command, so it always has them all.
      expect(commandsReachedBy([name, "--help"])).toEqual(name === "completion" ? ALL : [name]);
      expect(alone).toEqual(await run(["help", name]));
    },
  );

  it("a known command first: that command alone, whatever follows", () => {
    expect(commandsReachedBy(["validate", "-f", "plan"])).toEqual(["validate"]);
    expect(commandsReachedBy(["plan", "--help", "apply"])).toEqual(["plan"]);
  });

  it("a version flag first: no command, since commander prints the version as it reads the flag", () => {
    for (const flag of ["--version", "-V", "-v"]) expect(commandsReachedBy([flag, "validate"])).toEqual([]);
  });

  it("help, completion, a typo, an option first or nothing at all: every command", () => {
    for (const args of [
      [],
      ["help"],
      ["help", "plan"],
      ["completion", "bash"],
      ["lgos"],
      ["--help"],
      ["-h"],
      ["--", "plan"],
      ["-vV"],
      ["--bogus", "plan"],
      ["--api-key", "x"],
    ]) {
      expect(commandsReachedBy(args), args.join(" ")).toEqual(ALL);
    }
  });

  it("a version flag after a program option still prints only the version", async () => {
    const result = await run(["--help", "--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
