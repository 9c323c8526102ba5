// The built `pcsync apply` on a real terminal (a pseudo-terminal made by util-linux `script`): it
// asks after the plan, applies on "yes", and a Ctrl-C at the question cancels with exit 130 and
// nothing changed. (The other answers, and the runs that must not ask, are in test/cli.)

import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH } from "../support/cli.js";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import {
  geoipDescriptions,
  rolloutManifest,
  rolloutWorkDir,
  runSlow,
  threeWaveRollout,
} from "../support/rollout-setup.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

let server: TestServer;
let work: { write: WriteFile; remove: () => Promise<void> };

beforeAll(async () => {
  server = await startServer("seed");
  work = await temporaryDirectory();
});
afterAll(async () => {
  await server.close();
  await work.remove();
});

function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * Runs the CLI with a pseudo-terminal as its stdin, stdout and stderr; `answer` is typed once the
 * question shows. Resolves with what the terminal showed and the exit code.
 */
function runOnTerminal(
  args: string[],
  answers: string | readonly string[],
  cwd?: string,
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, CLI_PATH, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd,
    env: { PATH: process.env.PATH ?? "", SHELL: "/bin/sh", NO_COLOR: "1", ...server.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const toType = typeof answers === "string" ? [answers] : answers;
  let screen = "";
  let answered = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    screen += chunk;
    // Each question shown is answered with the next answer.
    if (answered < toType.length && screen.split("(yes/no) ").length - 1 > answered) {
      child.stdin.write(toType[answered] ?? "");
      answered += 1;
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, screen: screen.replaceAll("\r\n", "\n") });
    });
  });
}

async function names(project: number): Promise<string[]> {
  return (await server.list(project, PC)).map((record) => String(record.name));
}

const creating = (name: string) =>
  manifest(
    "version: 1",
    "projects:",
    '  "3":',
    "    plugin_configs:",
    "      configs:",
    `        - { name: "${name}", plugin: 2 }`,
  );

describe.skipIf(process.platform !== "linux").concurrent("apply on a terminal", () => {
  it('asks after the plan and applies on "yes"', async () => {
    const file = await work.write("yes.yaml", creating("Typed yes"));
    const run = await runOnTerminal(["apply", "-f", file], "yes\r");
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toMatch(
      /\+ create "Typed yes"[\s\S]*Apply 1 change\? \(yes\/no\) yes\n[\s\S]*created/,
    );
    expect(await names(3)).toContain("Typed yes");
  });

  it("cancels on Ctrl-C at the question: exit 130, nothing changed", async () => {
    const file = await work.write("ctrl-c.yaml", creating("Interrupted at the question"));
    const run = await runOnTerminal(["apply", "-f", file], "\u0003");
    expect(run.code, run.screen).toBe(130);
    expect(run.screen).toMatch(/\(yes\/no\) (\^C)?\npcsync: Apply cancelled; nothing was changed\.\n$/);
    expect(await names(3)).not.toContain("Interrupted at the question");
  });
});

describe.skipIf(process.platform !== "linux")("rollback of a whole rollout on a terminal", () => {
  it("asks for each wave; declined or Ctrl-C at a later one, says which waves were undone and how to go on", async ({
    onTestFinished,
  }) => {
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest(
        "v-terminal",
        threeWaveRollout("0s").map((line) => line.replace("min_entries: 2", "min_entries: 0")),
      ),
    );
    const before = await geoipDescriptions(server);
    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.code, applied.stderr).toBe(0);
    const journal = /Rollout journal: (\S+)/.exec(applied.stderr)?.[1] ?? "";
    const run = await runOnTerminal(["rollback", "--journal", journal], ["yes\r", "no\r"], dir);
    expect(run.code, run.screen).toBe(1);
    expect(run.screen).toMatch(
      /Roll back with 1 change\? \(yes\/no\) yes\n[\s\S]*Roll back with 1 change\? \(yes\/no\) no\n/,
    );
    expect(run.screen).toContain(
      `rollback: the rollout's undo stopped; 1 wave of the rollout undone before it: "rest"; left: "second", "canary". Run pcsync rollback --journal ${journal} again to go on.`,
    );
    expect(run.screen).toMatch(
      /pcsync: Rollback cancelled; nothing more was changed \(1 wave of the rollout undone before it: "rest"\)\.\n$/,
    );
    // Run again, Ctrl-C at its second question: exit 130, and the same true account.
    const stopped = await runOnTerminal(["rollback", "--journal", journal], ["yes\r", "\u0003"], dir);
    expect(stopped.code, stopped.screen).toBe(130);
    expect(stopped.screen).toMatch(
      /pcsync: Rollback cancelled; nothing more was changed \(1 wave of the rollout undone before it: "second"\)\.\n$/,
    );
    // Run again, it goes on with the wave left.
    const again = await runSlow(server, ["rollback", "--journal", journal, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('1 wave undone, newest first: "canary".');
    expect(await geoipDescriptions(server)).toEqual(before);
  }, 60_000);
});
