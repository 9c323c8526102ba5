// White space the real service trims (DRF `CharField(trim_whitespace=True)`, Python's str.strip()):
// the posthog-2024 emulator trims as it does, the manifest refuses what would be trimmed, and
// records whose names only look like a config's (white space at the ends, NFC against NFD) are
// adopted and renamed, never deleted and copied, on both profiles, with lost answers too.

import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { createConfigDetailed } from "../../src/apply/create-config.js";
import { PROFILE_NAMES, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { loadManifestSources } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { lookAlikeKey } from "../../src/record-name.js";
import { PYTHON_WHITE_SPACE, showsText, trimAsService } from "../../src/trim-as-service.js";
import { applyOnce, pendingChanges } from "../support/apply-in-process.js";
import { dataWith } from "../support/emulator-data.js";
import { KEY, loadDesired } from "../support/scenario.js";
import { duplicateRecords } from "../support/state-checks.js";

/** What Python 3's `str.isspace()` accepts (so `str.strip()` strips), printed by Python itself. */
const PYTHON_ISSPACE = [
  0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("the service's trim (Python's str.strip())", () => {
  it("strips exactly the characters Python's str.isspace() accepts, at both ends only", () => {
    const stripped: number[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const character = String.fromCharCode(code);
      if (trimAsService(`${character}a${character}b${character}`) === `a${character}b`) stripped.push(code);
    }
    expect(stripped).toEqual(PYTHON_ISSPACE);
    // JavaScript's trim() takes U+FEFF and leaves U+0085 and U+001C: not the service's rule.
    expect(trimAsService("\ufeffGeoIP\u200b")).toBe("\ufeffGeoIP\u200b");
    expect(trimAsService("\u0085\u001cGeoIP\u3000")).toBe("GeoIP");
    expect(PYTHON_WHITE_SPACE).not.toContain("feff");
  });

  it("compares written text as sent or as trimmed, and NFC/NFD names as look-alikes", () => {
    expect(showsText("GeoIP ", "GeoIP")).toBe(true);
    expect(showsText("GeoIP", "GeoIP ")).toBe(false);
    expect(lookAlikeKey("Cafe\u0301 ")).toBe(lookAlikeKey("Caf\u00e9"));
    expect(lookAlikeKey("GeoIP")).not.toBe(lookAlikeKey("Geo IP"));
  });
});

describe("a manifest holding text the service would trim", () => {
  const load = (text: string) =>
    loadManifestSources([{ file: "pcsync.yaml", text }]).errors.map(
      (error) => `${error.line}:${error.col}: ${error.message}`,
    );

  it.each([
    ["a trailing space", '"GeoIP "', "7:17: name ends with white space (U+0020)"],
    ["a leading tab", '"\\tGeoIP"', "7:17: name starts with white space (U+0009)"],
    ["a no-break space", '"GeoIP\\u00a0"', "7:17: name ends with white space (U+00A0)"],
    ["an ideographic space", '"\\u3000GeoIP"', "7:17: name starts with white space (U+3000)"],
    ["a line separator", '"GeoIP\\u2028"', "7:17: name ends with white space (U+2028)"],
  ])("refuses a name with %s at its line and column", (_what, name, expected) => {
    const errors = load(`version: 1
projects:
  "1":
    plugin_configs:
      prune: true
      configs:
        - name: ${name}
          plugin: 1
`);
    expect(errors.some((error) => error.startsWith(expected))).toBe(true);
  });

  it("refuses a literal block's last line break, says how to drop it, and checks templates and overrides", () => {
    const errors = load(`version: 1
templates:
  base:
    plugin_configs:
      configs:
        - name: " GeoIP"
          plugin: 1
projects:
  "1":
    use: [base]
    plugin_configs:
      overrides:
        " GeoIP": { description: "Adds the country " }
      configs:
        - name: Taxonomy
          plugin: 3
          description: |
            Renames events
`);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^6:17: name starts with white space/),
        expect.stringMatching(/^13:34: description ends with white space/),
        expect.stringMatching(/^17:24: description ends with white space \(U\+000A\).*write `\|-` or `>-`/),
      ]),
    );
  });

  it("accepts white space inside, U+200B and U+FEFF (which the service keeps), and a project set's name", () => {
    const errors = load(`version: 1
project_sets:
  - name: "web "
    projects: ["1"]
projects:
  "1":
    plugin_configs:
      configs:
        - name: "Geo  IP\\u200b"
          plugin: 1
          description: "a\\tb"
`);
    expect(errors).toEqual([]);
  });
});

/** Records as a service may hold them from before (another client, the admin): untrimmed, NFD. */
const LEGACY = [
  { id: 200, family: "plugin_configs" as const, project: 3, plugin: 1, order: 1, name: "GeoIP\u00a0" },
  { id: 201, family: "plugin_configs" as const, project: 3, plugin: 2, order: 2, name: "Cafe\u0301" },
  {
    id: 202,
    family: "plugin_configs" as const,
    project: 3,
    plugin: 3,
    order: 3,
    name: "Taxonomy",
    description: "Renames\n",
  },
];

const MANIFEST = `version: 1
projects:
  "3":
    plugin_configs:
      prune: true
      configs:
        - name: GeoIP
          plugin: 1
        - name: "Caf\\u00e9"
          plugin: 2
        - name: Taxonomy
          plugin: 3
          description: Renames
        - name: S3 Export
          plugin: 5
          description: Batches
`;

async function start(
  profile: (typeof PROFILE_NAMES)[number],
  legacy = LEGACY,
): Promise<[RunningEmulator, ApiClient]> {
  const data = dataWith(legacy);
  data.keys = [{ key: KEY, scopes: null, projects: "*" }];
  const emulator = await startEmulator({ profile, data });
  const client = new ApiClient({
    baseUrl: emulator.url,
    apiKey: KEY,
    concurrency: 2,
    retry: { retries: 8, baseDelayMs: 1, maxDelayMs: 5 },
  });
  cleanup.push(
    () => emulator.close(),
    () => client.close(),
  );
  return [emulator, client];
}

describe.each(PROFILE_NAMES)("records whose names only look like the manifest's (%s)", (profile) => {
  it("are adopted and renamed, named as look-alikes, never pruned and copied; the next plan is empty", async () => {
    const [emulator, client] = await start(profile);
    const desired = loadDesired(MANIFEST);
    const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
    const { plan } = computePlan(desired, current);
    const summary = plan?.changes.map((change) => `${change.action} ${change.id} ${change.lookAlike ?? "-"}`);
    expect(summary).toEqual(
      expect.arrayContaining([
        "update 200 white space",
        "update 201 Unicode normalisation",
        "update 202 -",
        "create null -",
      ]),
    );
    expect(plan?.changes.filter((change) => change.action === "delete")).toEqual([]);

    // Half the writes commit and lose their answer: the settle re-read must see what was stored.
    emulator.setFaults({ dropWriteRate: 0.5, seed: 7 });
    for (let round = 0; round < 3; round += 1) await applyOnce(client, desired);
    emulator.setFaults({});
    expect(await pendingChanges(client, desired)).toEqual([]);
    const live = emulator.snapshot().records.filter((record) => record.project === 3 && !record.deleted);
    expect(duplicateRecords(emulator.snapshot())).toEqual([]);
    // The records kept their ids (and, on the real service, their plugin config and secrets).
    expect(live.filter((record) => record.id < 203).map((record) => [record.id, record.name])).toEqual([
      [200, "GeoIP"],
      [201, "Caf\u00e9"],
      [202, "Taxonomy"],
    ]);
  });

  it("two look-alikes of one config are an error asking for id:, not a guess", async () => {
    const [, client] = await start(profile, [
      { id: 200, family: "plugin_configs", project: 3, plugin: 1, order: 1, name: "GeoIP " },
      { id: 201, family: "plugin_configs", project: 3, plugin: 1, order: 2, name: "\tGeoIP" },
    ]);
    const desired = loadDesired(MANIFEST);
    const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
    const { plan, errors } = computePlan(desired, current);
    expect(plan).toBeUndefined();
    expect(errors.map((error) => error.message).join("\n")).toMatch(
      /no record in project 3 plugin_configs is named "GeoIP", but 2 look like it \(ids and names: 200 "GeoIP ", 201 "\\tGeoIP".*pin the one to manage with "id:"/,
    );
  });
});

describe("the posthog-2024 emulator trims as the real service", () => {
  it("stores name and description stripped on create and update, JSON and form bodies; seed keeps them", async () => {
    for (const profile of PROFILE_NAMES) {
      const [emulator] = await start(profile, []);
      const post = async (body: string, type: string) => {
        const response = await fetch(`${emulator.url}/api/projects/3/plugin_configs/`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": type },
          body,
        });
        return (await response.json()) as { id: number; name: string; description: string };
      };
      const created = await post(
        JSON.stringify({ plugin: 1, order: 1, name: "\u3000GeoIP \n", description: "\t  " }),
        "application/json",
      );
      const patched = await fetch(`${emulator.url}/api/projects/3/plugin_configs/${created.id}/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "Adds\u0085" }),
      }).then(async (response) => (await response.json()) as { description: string });
      if (profile === "posthog-2024") {
        expect(created.name).toBe("GeoIP");
        // Empty once trimmed: shown as the plugin's own text, as for "".
        expect(created.description).toBe("Enrich events with the location of their IP address.");
        expect(patched.description).toBe("Adds");
        const form = await post(
          new URLSearchParams({ plugin: "2", order: "2", name: " Filter\t" }).toString(),
          "application/x-www-form-urlencoded",
        );
        expect(form.name).toBe("Filter");
      } else {
        expect(created.name).toBe("\u3000GeoIP \n");
        expect(patched.description).toBe("Adds\u0085");
      }
    }
  });
});

describe.each(PROFILE_NAMES)("a create whose text the service trims (%s)", (profile) => {
  it("is recognised by the settle re-read after its answer is lost: one record, never a second POST", async () => {
    const [emulator, client] = await start(profile, []);
    emulator.setFaults({ dropWriteRate: 1, seed: 1 });
    const result = await createConfigDetailed(client, "3", "plugin_configs", {
      plugin: 1,
      order: 1,
      name: "GeoIP ",
      description: "Adds\n",
    });
    emulator.setFaults({});
    expect(result.record.name).toBe(profile === "posthog-2024" ? "GeoIP" : "GeoIP ");
    const posts = emulator.requestLog.filter((entry) => entry.method === "POST");
    expect(posts).toHaveLength(1);
    expect(emulator.snapshot().records.filter((record) => record.project === 3)).toHaveLength(1);
  });
});
