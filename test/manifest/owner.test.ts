// `owner:` in the manifest: its form, one owner per run across files, and what it asks of the
// descriptions written anywhere (configs, templates, overrides), each at its file:line:col.

import { describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifestSources, NO_VARIABLES } from "../../src/manifest/index.js";
import { manifest } from "../support/manifest-text.js";

const load = (...sources: { file: string; text: string }[]) => loadManifestSources(sources, NO_VARIABLES);
const errorsOf = (...sources: { file: string; text: string }[]) =>
  load(...sources).errors.map(formatDiagnostic);

const body = (description: string) => [
  "projects:",
  '  "1":',
  "    plugin_configs:",
  "      configs:",
  "        - name: GeoIP",
  "          plugin: 1",
  `          description: ${JSON.stringify(description)}`,
];

describe("owner: in the manifest", () => {
  it("reaches the desired state with where it was written", () => {
    const result = load({ file: "a.yaml", text: manifest("version: 1", "owner: team-a.1_x", ...body("x")) });
    expect(result.errors).toEqual([]);
    expect(result.value?.owner).toEqual({ name: "team-a.1_x", source: { file: "a.yaml", line: 2, col: 8 } });
  });

  it("refuses a name that is not letters, digits and -_. up to 40, at its line", () => {
    for (const owner of ['"team a"', '""', "x".repeat(41), "team/a", '"team-a\\n"']) {
      const errors = errorsOf({
        file: "a.yaml",
        text: manifest("version: 1", `owner: ${owner}`, ...body("x")),
      });
      expect(errors.length, owner).toBeGreaterThan(0);
      expect(errors[0], owner).toMatch(/^a\.yaml:2:8: /);
    }
    expect(errorsOf({ file: "a.yaml", text: manifest("version: 1", "ownr: team-a") })[0]).toContain(
      'did you mean "owner"',
    );
  });

  it("is one per run: a file that says another owner is an error naming the first", () => {
    const errors = errorsOf(
      { file: "a.yaml", text: manifest("version: 1", "owner: team-a", ...body("x")) },
      { file: "b.yaml", text: manifest("version: 1", "owner: team-b") },
      { file: "c.yaml", text: manifest("version: 1", "owner: team-a") },
    );
    expect(errors).toEqual([
      'b.yaml:2:8: owner "team-b" differs from "team-a" at a.yaml:2; the files of one run share one owner: run each owner\'s manifests separately',
    ]);
    // A file without owner: (templates, say) runs under the owner of the others.
    const merged = load(
      { file: "a.yaml", text: manifest("version: 1", "owner: team-a", ...body("x")) },
      { file: "t.yaml", text: manifest("version: 1", "templates: {}") },
    );
    expect(merged.value?.owner?.name).toBe("team-a");
  });

  it("refuses a description that the mark would take over the service's 1000 characters, wherever written", () => {
    const owner = "o".repeat(40);
    // The mark takes "\n\n" + "[pcsync owner=" + 40 + "]" = 57 characters: 943 fit, 944 do not.
    expect(
      errorsOf({ file: "a.yaml", text: manifest("version: 1", `owner: ${owner}`, ...body("x".repeat(943))) }),
    ).toEqual([]);
    expect(
      errorsOf({ file: "a.yaml", text: manifest("version: 1", `owner: ${owner}`, ...body("x".repeat(944))) }),
    ).toEqual([
      `a.yaml:9:24: description is too long with the owner mark of "${owner}": 1001 characters, the service takes at most 1000; shorten it by 1 characters`,
    ]);
    const templated = manifest(
      "version: 1",
      "templates:",
      "  t:",
      "    plugin_configs:",
      "      configs:",
      "        - name: A",
      "          plugin: 1",
      `          description: ${"y".repeat(990)}`,
      "projects:",
      '  "1":',
      "    use: [t]",
      "    plugin_configs:",
      "      overrides:",
      `        A: { description: ${"z".repeat(995)} }`,
    );
    const errors = errorsOf(
      { file: "t.yaml", text: templated },
      { file: "o.yaml", text: manifest("version: 1", "owner: ops") },
    );
    expect(errors.map((error) => error.split(": description")[0])).toEqual(["t.yaml:8:24", "t.yaml:14:27"]);
  });

  it("without an owner, refuses a description that ends in an owner mark; with one, takes it", () => {
    const marked = "Runs nightly\n\n[pcsync owner=ops]";
    expect(errorsOf({ file: "a.yaml", text: manifest("version: 1", ...body(marked)) })).toEqual([
      'a.yaml:8:24: description ends in an owner mark ("[pcsync owner=NAME]"), which only pcsync writes (for a manifest with `owner:`): end the text otherwise, or set `owner:` at the top of the manifest',
    ]);
    expect(errorsOf({ file: "a.yaml", text: manifest("version: 1", "owner: dev", ...body(marked)) })).toEqual(
      [],
    );
  });
});
