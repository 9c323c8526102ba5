// The one table of exit codes (src/exit-codes.ts) against what the commands do: every --help shows
// exactly its command's rows, and each command's real exit paths (a bad flag, an invalid manifest,
// pending changes, a refusal, a signal...) end with a code its row lists, and every code a row lists
// is reached by one of them; the manual's tables (README.md, docs/commands.md) list exactly its codes.
// Runs in-process against the emulator; signals use the built binary.

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMAND_NAMES, type CommandName, EXIT_CODE_TABLE, exitCodesOf } from "../../src/exit-codes.js";
import { CLI_MODULES_PATH, spawnCli } from "../support/cli.js";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { REPOSITORY } from "../support/paths.js";
import { API_KEY, startServer, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const HOLD_MODULE = fileURLToPath(new URL("../support/hold-module.mjs", import.meta.url));

let server: TestServer;
let work: WorkDir;
beforeAll(async () => {
  server = await startServer("seed");
  work = await temporaryDirectory();
});
afterAll(async () => {
  await server.close();
  await work.remove();
});

/** Every exit a test below saw, by command. */
const observed = new Map<CommandName, Set<number>>(COMMAND_NAMES.map((name) => [name, new Set<number>()]));

/** Runs pcsync in-process in the work directory, and checks its code is one the table lists. */
async function exitOf(
  command: CommandName,
  args: readonly string[],
): Promise<{ code: number; stderr: string }> {
  const result = await server.run([command, ...args], { cwd: work.path });
  see(command, result.code, result.stderr);
  return result;
}

function see(command: CommandName, code: number, detail = ""): void {
  const listed = exitCodesOf(command).map((row) => row.code);
  expect(listed, `${command} ended with ${code}, which its help does not list\n${detail}`).toContain(code);
  observed.get(command)?.add(code);
}

const CREATES = manifest(
  "version: 1",
  "projects:",
  '  "1":',
  "    plugin_configs:",
  "      configs:",
  "        - name: Exit codes",
  "          plugin: 1",
);
// Prune with everything protected: the plan deletes protected records, refused (exit 3).
const PROTECTED = manifest(
  "version: 1",
  "projects:",
  '  "2":',
  "    plugin_configs:",
  "      prune: true",
  '      protect: ["*"]',
  "      configs:",
  "        - name: Exit codes",
  "          plugin: 1",
);

describe("--help lists exactly the table's exit codes", () => {
  it("the table knows every command help lists", async () => {
    const help = await server.run(["--help"]);
    const commands = (help.stdout.split("\nCommands:\n")[1] ?? "")
      .split("\n")
      .flatMap((line) => /^ {2}([a-z]+)\b/.exec(line)?.[1] ?? [])
      .filter((name) => name !== "help");
    expect(commands).toEqual([...COMMAND_NAMES]);
    const section = help.stdout.split("\nExit codes:\n")[1] ?? "";
    expect(section.trimEnd().split("\n")).toEqual(
      EXIT_CODE_TABLE.map((row) => `  ${String(row.code).padEnd(3)}  ${row.meaning}`),
    );
  });

  it.each(COMMAND_NAMES)("pcsync %s --help", async (command) => {
    const help = await server.run([command, "--help"]);
    expect(help.code).toBe(0);
    const section = help.stdout.split("\nExit codes:\n")[1] ?? "";
    const rows = exitCodesOf(command);
    const width = Math.max(...rows.map((row) => String(row.code).length));
    expect(section.trimEnd().split("\n")).toEqual(
      rows.map((row) => `  ${String(row.code).padEnd(width)}  ${row.meaning}`),
    );
  });
});

describe("the manual's exit-code tables list exactly the table's codes", () => {
  it.each(["README.md", "docs/commands.md"])("%s", async (file) => {
    const text = await readFile(join(REPOSITORY, file), "utf8");
    const section = text.split("\n## Exit codes\n")[1]?.split("\n## ")[0] ?? "";
    // A row is `| 130, 143 | ... |` or `| 3 | ... |`; its first cell lists the codes it explains.
    const codes = section
      .split("\n")
      .flatMap((line) => /^\| *(\d+(?:, *\d+)*) *\|/.exec(line)?.[1]?.split(",") ?? [])
      .map((code) => Number(code.trim()));
    expect(codes, `${file}'s "Exit codes" table`).toEqual(EXIT_CODE_TABLE.map((row) => row.code));
  });
});

describe("each command's real exit paths end with a code its help lists", () => {
  it.each(COMMAND_NAMES)("%s: an unknown option is exit 1", async (command) => {
    const result = await exitOf(command, ["--no-such-option"]);
    expect(result.code).toBe(1);
  });

  it("validate: 0 valid, 1 invalid", async () => {
    const valid = await work.write("valid.yaml", CREATES);
    const invalid = await work.write("invalid.yaml", "version: 1\nprojects: [1]\n");
    expect((await exitOf("validate", ["-f", valid])).code).toBe(0);
    expect((await exitOf("validate", ["-f", invalid])).code).toBe(1);
  });

  it("plan and show: 0, 1, 2 with --detailed-exitcode, 3 for a protected delete", async () => {
    const creates = await work.write("creates.yaml", CREATES);
    const guarded = await work.write("protected.yaml", PROTECTED);
    expect((await exitOf("plan", ["-f", creates, "--detailed-exitcode", "-o", "pending.json"])).code).toBe(2);
    expect((await exitOf("plan", ["-f", creates])).code).toBe(0);
    expect((await exitOf("plan", ["-f", "invalid.yaml"])).code).toBe(1);
    expect((await exitOf("plan", ["-f", guarded])).code).toBe(3);
    expect((await exitOf("show", ["pending.json", "--detailed-exitcode"])).code).toBe(2);
    expect((await exitOf("show", ["pending.json"])).code).toBe(0);
    expect((await exitOf("show", ["missing.json"])).code).toBe(1);
  });

  it("watch --once: 2 drift, 3 refused, 1 invalid; apply: 0, 3, 1; then watch 0; rollback 3, 0, 1", async () => {
    const creates = await work.write("watched.yaml", CREATES.replace("Exit codes", "Watched"));
    const guarded = await work.write("watched-protected.yaml", PROTECTED);
    expect((await exitOf("watch", ["--once", "-f", creates])).code).toBe(2);
    expect((await exitOf("watch", ["--once", "--mode", "heal", "-f", guarded])).code).toBe(3);
    expect((await exitOf("watch", ["--once", "-f", "invalid.yaml"])).code).toBe(1);
    expect((await exitOf("apply", ["-f", guarded, "--auto-approve"])).code).toBe(3);
    expect((await exitOf("apply", ["-f", "invalid.yaml", "--auto-approve"])).code).toBe(1);
    const applied = await exitOf("apply", ["-f", creates, "--auto-approve", "--journal", "watched.jsonl"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await exitOf("watch", ["--once", "-f", creates])).code).toBe(0);

    // Changed since the run: rollback refuses, and --force goes ahead.
    const record = (await server.list(1, PC)).find((item) => item.name === "Watched");
    expect(record).toBeDefined();
    const edit = { description: "by hand" };
    expect((await server.call("PATCH", `/api/projects/1/plugin_configs/${record?.id}/`, edit)).status).toBe(
      200,
    );
    const refused = await exitOf("rollback", ["--journal", "watched.jsonl", "--auto-approve"]);
    expect(refused.code, refused.stderr).toBe(3);
    const forced = await exitOf("rollback", ["--journal", "watched.jsonl", "--auto-approve", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await exitOf("rollback", ["--journal", "missing.jsonl", "--auto-approve"])).code).toBe(1);
  });

  it.each(["SIGINT", "SIGTERM"] as const)(
    "watch --once: %s while its cycle waits for the service ends with the signal's code, as apply does",
    async (signal) => {
      // A service that answers only once the signal came (503): the signal comes while the cycle waits.
      const held: ServerResponse[] = [];
      const silent = createServer((_request, response) => {
        held.push(response);
      });
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      try {
        const file = await work.write(`watched-silently-${signal}.yaml`, CREATES);
        const run = spawnCli(["watch", "--once", "-f", file], {
          cwd: work.path,
          env: {
            ...server.env,
            PCSYNC_BASE_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
          },
        });
        await waitFor(() => held.length > 0, "the cycle's first request");
        run.child.kill(signal);
        await waitFor(() => run.soFar().stderr.includes("received: stopping"), "the watcher stopping");
        for (const response of held) response.writeHead(503).end();
        const ended = await run.done;
        see("watch", ended.code ?? -1, ended.stderr);
        expect(ended.stderr).toContain(`${signal} received: stopping`);
        expect(ended.code).toBe(signal === "SIGINT" ? 130 : 143);
      } finally {
        silent.closeAllConnections();
        await new Promise((resolve) => silent.close(resolve));
      }
    },
    30_000,
  );

  it("apply: 4 when a rollout halts on a failed health check (and is rolled back)", async () => {
    const rollout = await work.write(
      "rollout.yaml",
      manifest(
        "version: 1",
        "rollout:",
        "  waves:",
        "    - name: all",
        "      percent: 100",
        "  bake: 0s",
        "  health:",
        "    logs:",
        "      min_entries: 100000",
        "projects:",
        '  "3":',
        "    plugin_configs:",
        "      configs:",
        "        - name: Rolled out",
        "          plugin: 1",
        "          enabled: true",
      ),
    );
    const halted = await exitOf("apply", ["-f", rollout, "--auto-approve"]);
    expect(halted.code, halted.stderr).toBe(4);
  });

  it("export, logs, job, frontend, completion: 0, and 1 for what the service or the shell refuses", async () => {
    expect((await exitOf("export", ["--project", "1"])).code).toBe(0);
    expect((await exitOf("logs", ["--project", "1", "--config", "GeoIP"])).code).toBe(0);
    expect((await exitOf("logs", ["--project", "1", "--config", "No such config"])).code).toBe(1);
    const job = ["--project", "1", "--config", "Legacy S3", "--job", "Export historical events"];
    expect((await exitOf("job", job)).code).toBe(0);
    expect((await exitOf("frontend", ["--project", "1", "--config", "1"])).code).toBe(0);
    expect((await exitOf("completion", ["bash"])).code).toBe(0);
    expect((await exitOf("completion", ["tcsh"])).code).toBe(1);
  });

  it("demo: 0 when every step succeeds", async () => {
    expect((await exitOf("demo", [])).code).toBe(0);
  }, 60_000);

  it("serve: 0 when stopped by a signal, its data saved; 1 when it cannot start", async () => {
    expect((await exitOf("serve", ["--port", "not-a-port"])).code).toBe(1);
    const data = join(work.path, "serve-data.json");
    const serve = spawnCli(["serve", "--port", "0", "--data", data, "--key", API_KEY, "--quiet"], {
      cwd: work.path,
    });
    await waitFor(() => /listening|http:\/\//i.test(serve.soFar().stdout + serve.soFar().stderr), "serve");
    serve.child.kill("SIGTERM");
    const run = await serve.done;
    see("serve", run.code ?? -1, run.stderr);
    expect(run.code).toBe(0);
  }, 30_000);

  // A signal while the command's module loads: the binary's hold ends the run with the signal's code,
  // for every command (after that, one without handling of its own is ended by the signal, which a
  // shell reports with the same code; apply, rollback and watch have their own tests of theirs).
  it.concurrent.each(
    COMMAND_NAMES.flatMap((command) =>
      (["SIGINT", "SIGTERM"] as const).map((signal) => ({ command, signal })),
    ),
  )(
    "$command: $signal while it starts",
    async ({ command, signal }) => {
      const marker = join(work.path, `held-${command}-${signal}`);
      const run = spawnCli([command], {
        cwd: work.path,
        env: {
          ...server.env,
          NODE_OPTIONS: `--import=${pathToFileURL(HOLD_MODULE).href}`,
          PCSYNC_TEST_HOLD_MODULE: `/dist/src/cli/commands/${command}.js`,
          PCSYNC_TEST_HOLD_MARKER: marker,
        },
        cliPath: CLI_MODULES_PATH, // the tree of modules, whose command modules are held above
      });
      await waitFor(() => existsSync(marker), `the load of ${command}`);
      run.child.kill(signal);
      const ended = await run.done;
      expect(ended.signal).toBeNull();
      see(command, ended.code ?? -1, ended.stderr);
      expect(ended.code).toBe(signal === "SIGINT" ? 130 : 143);
    },
    30_000,
  );

  it("every code a command's help lists was reached above", () => {
    for (const command of COMMAND_NAMES) {
      const listed = exitCodesOf(command).map((row) => row.code);
      expect(
        [...(observed.get(command) ?? [])].sort((a, b) => a - b),
        command,
      ).toEqual(listed);
    }
  });
});
