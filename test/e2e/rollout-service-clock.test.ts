// E2E: a rollout's logs gate counts on the service's clock. Against an emulator whose clock is
// minutes ahead of this machine's (more than the bake), a healthy change is judged on what it
// logged and rolls out, and a broken one fails even with allow_unknown; and on posthog-2024, whose
// plugin_configs lists the frontend apps too, a frontend app managed there is not judged on the
// logs it never has, nor is one the wave creates there. The built CLI, on both profiles. Needs
// `npm run build`.

import { describe, expect, it } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { geoipDescriptions, rolloutManifest, rolloutWorkDir, runSlow } from "../support/rollout-setup.js";
import { openServer } from "../support/test-server.js";

const PROFILES = ["seed", "posthog-2024"] as const;

/** More than any bake here: a window on this machine's clock would hold no entry at all. */
const SERVICE_AHEAD_MS = 5 * 60_000;

/** Canary project 2, then the rest; baked 2s, judged on at least `minEntries` entries. */
function rollout(minEntries: number, allowUnknown: boolean): string[] {
  return [
    "rollout:",
    "  waves:",
    "    - name: canary",
    '      projects: ["2"]',
    "    - name: rest",
    "      percent: 100",
    "  bake: 2s",
    "  health:",
    "    logs:",
    `      min_entries: ${minEntries}`,
    `      allow_unknown: ${allowUnknown}`,
  ];
}

describe.concurrent.each(PROFILES)("a rollout on %s, whose clock is 5 minutes ahead", (profile) => {
  // Ten entries a second: a bake of 2s holds about twenty of them.
  const serverOptions = {
    logRate: 600,
    clockAheadMs: SERVICE_AHEAD_MS,
    faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
  };

  it("judges a healthy change on what it logged, and completes", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, profile, serverOptions);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v2", rollout(5, false)));
    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.stderr).not.toMatch(/health unknown/);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/wave 1\/2 "canary": project 2 passes: 0 ERROR of \d+ entries/);
    expect(applied.stdout).toContain("Rollout complete");
    expect(await geoipDescriptions(server)).toEqual(["v2", "v2", "v2"]);
  });

  it("fails a broken change in its canary, allow_unknown or not, and rolls it back", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, serverOptions);
    const before = await geoipDescriptions(server);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v3 BROKEN", rollout(1, true)));
    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.code, applied.stderr).toBe(4);
    expect(applied.stderr).toMatch(/wave 1\/2 "canary": project 2 FAILS: [1-9]\d* ERROR of \d+ entries/);
    expect(applied.stderr).not.toMatch(/health unknown/);
    expect(await geoipDescriptions(server)).toEqual(before);
  });
});

// Project 1's Notification Bar (plugin 40, a frontend app: id 4 in the example data), which
// posthog-2024's plugin_configs lists beside the plugin configs; and a second one, made by the
// canary: no list read before the wave holds it, so only a read after its writes can say what it is.
describe.each([
  { what: "updates", name: "Notification Bar", description: "A new banner" },
  { what: "creates", name: "Second Banner", description: "Made by the canary" },
])(
  "a rollout on posthog-2024 that $what a frontend app managed under plugin_configs",
  ({ name, description }) => {
    it("does not judge it on logs it never has: nothing to judge, and it completes", async ({
      onTestFinished,
    }) => {
      const server = await openServer(onTestFinished, "posthog-2024", { logRate: 600 });
      const { path: dir, write } = await rolloutWorkDir(onTestFinished);
      const file = await write(
        "pcsync.yaml",
        manifest(
          "version: 1",
          "rollout:",
          "  waves:",
          "    - name: canary",
          '      projects: ["1"]',
          "    - name: rest",
          "      percent: 100",
          "  bake: 1s",
          "  health:",
          "    logs:",
          "      min_entries: 1",
          "projects:",
          '  "1":',
          "    plugin_configs:",
          "      configs:",
          `        - name: ${name}`,
          "          plugin: 40",
          "          enabled: true",
          `          description: ${description}`,
        ),
      );
      const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(
        'wave 1/2 "canary": project 1 passes: nothing to judge: the plugin config the wave created or updated here is a frontend app (frontend apps run in the browser and have no logs)',
      );
      expect(applied.stdout).toContain("Rollout complete");
      const apps = await server.list(1, "pipeline_frontend_apps_configs");
      expect(apps.filter((record) => record.name === name).map((record) => record.description)).toEqual([
        description,
      ]);
    });
  },
);
