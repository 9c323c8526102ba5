// E2E: `pcsync watch --mode heal` and another actor that puts a record back after every cycle, the
// built CLI against the emulator: after 3 heals in a row the record is flapping, left alone with a
// backoff that doubles, reported by a heal_flapping event and pcsync_heal_flapping; once the actor
// stops, the record stays put and the count resets.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { metricValue, startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

/** A webhook receiver on port 0 that keeps the events it gets, with the cycle count at arrival. */
async function openReceiver(onFinished: (handler: () => Promise<void>) => void) {
  const events: { event: string; message?: string }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      events.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events };
}

describe("pcsync watch --mode heal and a record something else keeps changing", { timeout: 60_000 }, () => {
  it("leaves a flapping record alone with a doubling backoff, and forgets it once it stays put", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openReceiver(onTestFinished);
    const file = join(directory, "flapping.yaml");
    await writeSettled(
      file,
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          enabled: true",
      ),
    );
    // 500 ms cycles: a flapping record is first left alone for two of them (1 s), then 2 s.
    const watcher = await startWatcher(
      ["-f", file, "--mode", "heal", "--interval", "500ms", "--jitter", "0", "--webhook", receiver.url],
      { env: server.env },
    );
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });

    // The other actor: after every cycle, GeoIP (id 5) is disabled again.
    let reverting = true;
    let seen = 0;
    let stopped = false;
    const actor = (async () => {
      while (!stopped) {
        const lines = watcher.soFar().stdout.match(/^\S+ cycle \d+ .*$/gm) ?? [];
        if (reverting && lines.length > seen) {
          seen = lines.length;
          await server.call("PATCH", "/api/projects/2/plugin_configs/5/", { enabled: false });
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    onTestFinished(async () => {
      stopped = true;
      await actor;
    });

    const flapping = () => receiver.events.filter((event) => event.event === "heal_flapping");
    await expect.poll(() => flapping().length, { timeout: 20_000 }).toBe(1);
    expect(flapping()[0]?.message).toMatch(
      /healed in 3 cycles in a row.*\n"GeoIP" \(id 5\): left alone for 1 s$/s,
    );
    const scraped = async () => (await watcher.get("/metrics")).text;
    const labels = { project: "2", family: "plugin_configs" };
    expect(metricValue(await scraped(), "pcsync_heal_flapping", labels)).toBe(1);
    // The first three events were heals, and the three heals came in a row.
    expect(receiver.events.slice(0, 3).map((event) => event.event)).toEqual(["healed", "healed", "healed"]);

    // Flapping again after its backoff: twice as long.
    await expect.poll(() => flapping().length, { timeout: 20_000 }).toBe(2);
    expect(flapping()[1]?.message).toMatch(/"GeoIP" \(id 5\): left alone for 2 s$/);
    // In between, a cycle left it alone: drift reported, nothing healed (before, every cycle healed
    // it, and says 0 drifting).
    const lines = watcher.soFar().stdout.match(/^\S+ cycle \d+ .*$/gm) ?? [];
    const alone = lines.filter((line) => /1 drifting \(1 change\)$/.test(line));
    expect(alone.length).toBeGreaterThanOrEqual(1);
    const heals = receiver.events.filter((event) => event.event === "healed").length;

    // The actor stops: the next heal holds, the record stays put, and it is no longer flapping.
    reverting = false;
    await expect
      .poll(async () => metricValue(await scraped(), "pcsync_heal_flapping", labels), { timeout: 20_000 })
      .toBe(0);
    expect((await server.list(2, "plugin_configs")).find((record) => record.id === 5)?.enabled).toBe(true);
    // At most one more heal (the one after the backoff, if the actor's last change came after the
    // heal that flapped), and no more flapping events.
    expect(receiver.events.filter((event) => event.event === "healed").length).toBeLessThanOrEqual(heals + 1);
    expect(flapping()).toHaveLength(2);
  });
});
