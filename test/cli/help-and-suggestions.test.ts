// Every command's --help ends with examples, and typos get the closest name with exit 1.

import { readFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/cli-io.js";
import { buildProgram, runCli } from "../../src/cli/program.js";
import { SecretRegistry } from "../../src/redact.js";

function captureIo(): { io: CliIo; stdout: () => string; stderr: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = "";
  let stderr = "";
  out.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  err.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return {
    io: { stdout: out, stderr: err, env: {}, cwd: process.cwd(), secrets: new SecretRegistry() },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

async function run(args: string[]) {
  const capture = captureIo();
  const code = await runCli(args, capture.io);
  return { code, stdout: capture.stdout(), stderr: capture.stderr() };
}

const commandNames = (await buildProgram(captureIo().io, () => undefined)).commands.map((command) =>
  command.name(),
);

describe("help", () => {
  it.each(commandNames)("pcsync %s --help shows an example", async (name) => {
    const result = await run([name, "--help"]);
    expect(result.code).toBe(0);
    const examples = result.stdout.split(/\nExamples?:\n/)[1] ?? "";
    expect(examples).toMatch(/^ {2}\$ /);
    expect(examples).toContain(`pcsync ${name}`);
  });
});

describe("exit codes in help", () => {
  it("the program's help lists every exit code", async () => {
    const result = await run(["--help"]);
    const section = result.stdout.split("\nExit codes:\n")[1] ?? "";
    for (const code of [0, 1, 2, 3, 130, 143]) expect(section).toMatch(new RegExp(`^ +${code} +\\S`, "m"));
    // -v is no longer offered as the version: commands read it as --verbose.
    expect(result.stdout).not.toMatch(/-v\b.*version|version.*-v\b/);
  });

  it.each(commandNames.filter((name) => name !== "help"))(
    "pcsync %s --help lists the exit codes it can end with",
    async (name) => {
      const section = (await run([name, "--help"])).stdout.split("\nExit codes:\n")[1] ?? "";
      expect(section).toMatch(/^ {2}0 +\S/m);
      expect(section).toMatch(/^ {2}1 +\S/m);
      if (name === "plan") expect(section).toMatch(/^ {2}2 +plan --detailed-exitcode/m);
      if (name === "apply") expect(section).toMatch(/^ {2}3 +refused/m);
    },
  );

  it("demo --help shows one default for -f", async () => {
    const help = (await run(["demo", "--help"])).stdout.replace(/\s+/g, " ");
    const option = help.slice(help.indexOf("-f, --file"), help.indexOf("--var "));
    expect(option).toBe("-f, --file <path> manifest file or directory (default: the bundled examples/) ");
  });
});

describe("version", () => {
  it.each(["--version", "-V"])("pcsync %s prints the package's version", async (flag) => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const result = await run([flag]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });
});

describe("typos", () => {
  it("suggests the closest command", async () => {
    const result = await run(["lgos"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe(
      "error: unknown command 'lgos'\n(Did you mean logs?)\n(run 'pcsync <command> --help' for usage)\n",
    );
  });

  it.each([
    [["logs", "--projcet", "1", "--config", "GeoIP"], "--projcet", "--project"],
    [["job", "--project", "1", "--config", "x", "--paylod", "{}"], "--paylod", "--payload"],
    [["frontend", "--famly", "plugin_configs"], "--famly", "--family"],
    [["logs", "--folow"], "--folow", "--follow"],
  ])("suggests the closest option of a subcommand: %j", async (args, typo, suggestion) => {
    const result = await run(args);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe(
      `error: unknown option '${typo}'\n(Did you mean ${suggestion}?)\n(run 'pcsync <command> --help' for usage)\n`,
    );
  });

  it.each([
    [["--type", "A", "--job", "B"], '--type "A" and --job "B"'],
    [["--job", "B", "--type", "A"], '--type "A" and --job "B"'],
  ])("refuses one option given two values under its two spellings: job %j", async (flags, said) => {
    const result = await run(["job", "--project", "1", "--config", "GeoIP", ...flags]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe(`pcsync: ${said} are one option given two values: give one\n`);
  });

  it("names a missing required flag with an example once the flags are spelt right", async () => {
    const result = await run(["job", "--project", "1", "--config", "GeoIP"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe('pcsync: --type <job> is required (e.g. --type "Export historical events")\n');
  });

  it("refuses an invalid choice, listing the allowed ones", async () => {
    const result = await run(["logs", "--format", "yaml"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Allowed choices are text, json.");
  });
});
