// E2E: `export --all --templates` plans back to no changes, on both profiles. The manifest loader
// reads templates only once the fleet syntax is merged (issue 14).

import { describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { fleetData } from "../support/fleet-data.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

describe.concurrent.each<ProfileName>(["seed", "posthog-2024"])(
  "export --all --templates on %s",
  (profile) => {
    it("plans back to no changes", async ({ onTestFinished }) => {
      const server = await openServer(onTestFinished, profile, { data: fleetData() });
      const work = await temporaryDirectory();
      onTestFinished(() => work.remove());
      const exported = await server.run(["export", "--all", "--templates"]);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain("templates:");
      const file = await work.write(`fleet-${profile}.yaml`, exported.stdout);
      const plan = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
      expect(plan.stderr).toBe("");
      expect(plan.stdout).toContain("No changes.");
      expect(plan.code).toBe(0);
    });
  },
);
