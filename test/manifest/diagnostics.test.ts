// How diagnostics are printed for people and for GitHub Actions, and the typo suggestions.

import { describe, expect, it } from "vitest";
import { sortDiagnostics } from "../../src/manifest/diagnostics.js";
import {
  formatDiagnostic,
  formatGithubAnnotation,
  type ManifestDiagnostic,
} from "../../src/manifest/index.js";
import { suggestClosest } from "../../src/manifest/suggest.js";

const error: ManifestDiagnostic = { file: "pcsync.yaml", line: 3, col: 7, message: "bad", severity: "error" };

describe("formatDiagnostic", () => {
  it("prints file:line:col: message", () => {
    expect(formatDiagnostic(error)).toBe("pcsync.yaml:3:7: bad");
  });

  it("marks warnings and whole-file problems", () => {
    expect(formatDiagnostic({ ...error, severity: "warning" })).toBe("pcsync.yaml:3:7: warning: bad");
    expect(formatDiagnostic({ ...error, line: 0, col: 0 })).toBe("pcsync.yaml: bad");
  });

  it("keeps one diagnostic on one line", () => {
    expect(formatDiagnostic({ ...error, message: "a\nb\r\nc" })).toBe("pcsync.yaml:3:7: a\\nb\\nc");
  });
});

describe("formatGithubAnnotation", () => {
  it("emits an error annotation with the position", () => {
    expect(formatGithubAnnotation(error)).toBe("::error file=pcsync.yaml,line=3,col=7::bad");
  });

  it("escapes %, CR and LF in the message, and also : and , in properties", () => {
    const annotation = formatGithubAnnotation({
      ...error,
      file: "dir,1/a:b%.yaml",
      message: 'unknown key "x: y"; 100% sure,\r\nreally',
    });
    expect(annotation).toBe(
      '::error file=dir%2C1/a%3Ab%25.yaml,line=3,col=7::unknown key "x: y"; 100%25 sure,%0D%0Areally',
    );
  });

  it("annotates warnings as warnings, and whole files without a position", () => {
    expect(formatGithubAnnotation({ ...error, severity: "warning", line: 0, col: 0 })).toBe(
      "::warning file=pcsync.yaml::bad",
    );
  });
});

describe("sortDiagnostics", () => {
  it("puts files in the given order first, then the others by code unit, the same in every locale", () => {
    const at = (file: string, line: number): ManifestDiagnostic => ({ ...error, file, line });
    const sorted = sortDiagnostics(
      [at("b.yaml", 1), at("a.yaml", 2), at("B.yaml", 1), at("z.yaml", 9), at("a.yaml", 1)],
      ["z.yaml"],
    );
    // localeCompare would put a.yaml before B.yaml; the order must not depend on the machine.
    expect(sorted.map((diagnostic) => `${diagnostic.file}:${diagnostic.line}`)).toEqual([
      "z.yaml:9",
      "B.yaml:1",
      "a.yaml:1",
      "a.yaml:2",
      "b.yaml:1",
    ]);
  });
});

describe("suggestClosest", () => {
  const keys = ["name", "plugin", "enabled", "description", "match_action", "order", "id"];

  it.each([
    ["enabeld", "enabled"],
    ["Enabled", "enabled"],
    ["plugn", "plugin"],
    ["descripton", "description"],
    ["match-action", "match_action"],
    ["ordr", "order"],
  ])("suggests %s -> %s", (typo, expected) => {
    expect(suggestClosest(typo, keys)).toBe(expected);
  });

  it.each(["colour", "x", "deleted", "a".repeat(500)])("suggests nothing for %s", (input) => {
    expect(suggestClosest(input, keys)).toBeUndefined();
  });
});
