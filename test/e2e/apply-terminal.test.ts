// The built `pcsync apply` on a real terminal (a pseudo-terminal made by util-linux `script`): it
// asks after the plan, applies on "yes", and a Ctrl-C at the question cancels with exit 130 and
// nothing changed. (The other answers, and the runs that must not ask, are in test/cli.)

import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH } from "../support/cli.js";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
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
function runOnTerminal(args: string[], answer: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, CLI_PATH, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: { PATH: process.env.PATH ?? "", SHELL: "/bin/sh", NO_COLOR: "1", ...server.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let answered = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    screen += chunk;
    if (!answered && screen.includes("(yes/no) ")) {
      answered = true;
      child.stdin.write(answer);
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
