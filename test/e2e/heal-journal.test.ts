// E2E: heal writes through the journaled apply. A `watch --mode heal --once` that heals drift keeps
// a journal (under .pcsync/journal/ of its working directory), names it in its log line and in its
// `healed` event, and `pcsync rollback --journal` puts the drifted state back.

import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

describe("heal keeps a journal", { timeout: 90_000 }, () => {
  it("watch --mode heal --once heals drift, names its journal, and rollback restores the drift", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const bodies: string[] = [];
    const receiver = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      request.on("end", () => {
        bodies.push(body);
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise((resolve) => receiver.close(() => resolve())));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const file = join(directory, "heal.yaml");
    await writeSettled(
      file,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          enabled: true",
        "          description: Adds country",
      ),
    );
    // Drift made by hand: GeoIP disabled and its description changed.
    await server.call("PATCH", "/api/projects/1/plugin_configs/1/", {
      enabled: false,
      description: "by hand",
    });
    const drifted = (await server.list(1, "plugin_configs")).find((record) => record.id === 1);
    expect(drifted).toMatchObject({ enabled: false, description: "by hand" });

    const healed = await runBuiltCli(
      ["watch", "--once", "--mode", "heal", "-f", file, "--log-format", "json", "--webhook", hook],
      { env: server.env, cwd: directory, timeoutMs: 60_000 },
    );
    expect(healed.code, healed.stderr).toBe(0);
    const line = JSON.parse(healed.stdout.trim().split("\n").at(-1) ?? "{}") as {
      healed: number;
      journal?: string;
    };
    expect(line.healed).toBe(1);
    expect(line.journal).toMatch(/^\.pcsync\/journal\/\S+\.jsonl$/);
    const journal = line.journal ?? "";
    const header = JSON.parse((await readFile(join(directory, journal), "utf8")).split("\n")[0] ?? "{}");
    expect(header).toMatchObject({ command: "heal", server: server.env.PCSYNC_BASE_URL });
    const event = bodies
      .map((body) => JSON.parse(body) as { event: string; journal?: string })
      .find((item) => item.event === "healed");
    expect(event).toMatchObject({ event: "healed", journal });
    expect((await server.list(1, "plugin_configs")).find((record) => record.id === 1)).toMatchObject({
      enabled: true,
      description: "Adds country",
    });
    // No lock is left: the heal released it.
    await expect(readFile(join(directory, `${journal}.lock`))).rejects.toThrow();

    const undone = await runBuiltCli(["rollback", "--journal", journal, "--auto-approve"], {
      env: server.env,
      cwd: directory,
      timeoutMs: 60_000,
    });
    expect(undone.code, undone.stderr).toBe(0);
    expect((await server.list(1, "plugin_configs")).find((record) => record.id === 1)).toMatchObject({
      enabled: false,
      description: "by hand",
    });

    // The text log line names it too.
    await server.call("PATCH", "/api/projects/1/plugin_configs/1/", { enabled: false });
    const text = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", file], {
      env: server.env,
      cwd: directory,
      timeoutMs: 60_000,
    });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/1 healed \(journal \.pcsync\/journal\/\S+\.jsonl\)/);
  });
});
