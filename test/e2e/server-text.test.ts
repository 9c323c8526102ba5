// Server text cannot drive a terminal or a CI runner. A record name, description and log messages
// full of what a terminal or the GitHub Actions runner acts on (escape sequences, C0 and C1
// controls, bidirectional overrides and other format characters, line breaks followed by `::`
// commands, `##[` anywhere, `#123` and `@user` for the Markdown) go through every command and
// format that prints server text; what each prints is checked for all of them. JSON stays data:
// parsed, it holds the name exactly.

import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { exampleData } from "../../src/emulator/index.js";
import { exportText } from "../../src/export/update-manifest.js";
import {
  neutraliseInline,
  neutraliseJson,
  neutraliseLines,
  quoteServerText,
} from "../../src/neutralise-server-text.js";
import { Document, parse } from "../../src/vendor/yaml.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const HOSTILE =
  "GeoIP \u001b[31m\u001b]0;title\u0007 ##[add-mask]x \u202egnp.exe\u2066 \u200b#123 @octocat\u009b2J\u0085::warning::nel\u2028::error::ls\r\n::add-mask::crlf\n  ::notice::indented\u007f\u{e0041}";
const HOSTILE_LOG = `line one\n::add-mask::secret\n\t##[error]tab\r\u001b[2Jclear\u000b::warning::vt`;

// What must never reach a terminal or a runner's log: controls but the line break and tab, DEL,
// C1, format characters, separators; `##[` anywhere; `::` at a line's start after white space.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/u;
const unsafeIn = (output: string): string[] => {
  const found: string[] = [];
  const character = UNSAFE.exec(output);
  if (character) found.push(`U+${character[0].codePointAt(0)?.toString(16)} at ${character.index}`);
  if (output.includes("##[")) found.push("##[");
  const command = output.split("\n").find((line) => /^\s*::/u.test(line));
  if (command !== undefined) found.push(`a line starting with :: (${command})`);
  return found;
};

/** Markdown outside code blocks: no bare `#123` (an issue link) nor `@user` (a mention). */
const autolinksIn = (markdown: string): string[] =>
  markdown
    .split(/^```[\s\S]*?^```$/m)
    .flatMap((text) => [...text.matchAll(/(?<![&\w])#\d+|@\w+/g)].map((match) => match[0]));

const hostileDocument = () => new Document({ name: HOSTILE, log: HOSTILE_LOG, plain: "GeoIP" });

describe("the neutralising functions", () => {
  it.each([
    ["neutraliseInline", neutraliseInline(HOSTILE)],
    ["neutraliseLines", neutraliseLines(HOSTILE).join("\n")],
    ["neutraliseLines (a log)", neutraliseLines(HOSTILE_LOG).join("\n    ")],
    ["quoteServerText", quoteServerText(HOSTILE)],
    ["neutraliseJson", neutraliseJson(JSON.stringify({ name: HOSTILE }, null, 2))],
    ["neutraliseYaml (an export printed)", exportText(hostileDocument(), "display")],
  ])("%s leaves nothing a terminal or runner acts on", (_name, output) => {
    expect(unsafeIn(output)).toEqual([]);
  });

  it("keeps YAML the same data, printed; a file gets the text exactly", () => {
    const printed = exportText(hostileDocument(), "display");
    expect(parse(printed)).toEqual({ name: HOSTILE, log: HOSTILE_LOG, plain: "GeoIP" });
    // Only what must be escaped is quoted: plain text stays plain.
    expect(printed).toContain("plain: GeoIP\n");
    const filed = exportText(hostileDocument(), "file");
    expect(parse(filed)).toEqual({ name: HOSTILE, log: HOSTILE_LOG, plain: "GeoIP" });
    expect(filed).toContain("\u202egnp.exe\u2066");
  });

  it("keeps JSON the same data, and shows every character it escapes", () => {
    const json = neutraliseJson(JSON.stringify({ name: HOSTILE }));
    expect(JSON.parse(json)).toEqual({ name: HOSTILE });
    expect(neutraliseInline("a\u202eb\u0085c\u{e0041}##[x")).toBe("a\\u202eb\\u0085c\\u{e0041}#\\u0023[x");
    expect(neutraliseLines(" ::add-mask::k\r\nok\tx")).toEqual([" \\u003a:add-mask::k", "ok\tx"]);
  });
});

describe("every command that prints server text", () => {
  const data = () => {
    const example = exampleData();
    const geoip = example.records.find((record) => record.id === 1);
    if (geoip === undefined) throw new Error("no record 1 in the example data");
    geoip.name = HOSTILE;
    geoip.description = HOSTILE;
    // A second record of that name: `--config NAME` is then ambiguous, and the error lists both.
    const twin = example.records.find((record) => record.id === 2);
    if (twin === undefined) throw new Error("no record 2 in the example data");
    twin.name = HOSTILE;
    const frontend = example.records.find((record) => record.family === "pipeline_frontend_apps_configs");
    if (frontend === undefined) throw new Error("no frontend app in the example data");
    frontend.name = HOSTILE;
    // A name no manifest can hold is left out of an export (with a warning that shows it inert);
    // a description can hold any text: export carries it, escaped.
    const legacy = example.records.find((record) => record.id === 3);
    if (legacy === undefined) throw new Error("no record 3 in the example data");
    legacy.description = HOSTILE;
    example.logEntries.push({
      ...(example.logEntries.find((entry) => entry.plugin_config_id === 1) ?? example.logEntries[0]),
      id: "018fd5a0-0000-7000-8000-0000000000ff",
      plugin_config_id: 1,
      team_id: 1,
      source: "PLUGIN\u001b[0m",
      type: "INFO",
      message: HOSTILE_LOG,
    } as (typeof example.logEntries)[number]);
    return { example, frontendId: frontend.id };
  };
  const pruning = [
    "version: 1",
    "projects:",
    '  "1":',
    "    plugin_configs:",
    "      prune: true",
    "      configs:",
    "        - name: Another",
    "          plugin: 1",
    "",
  ].join("\n");

  const rows: {
    name: string;
    args: (frontendId: number) => string[];
    markdown?: boolean;
    json?: boolean;
    /** stdout is an exported manifest: parsed, it holds the hostile name exactly. */
    yaml?: boolean;
    /** `OUT` is a file: it holds the hostile name byte for byte, and parses to it. */
    toFile?: boolean;
  }[] = [
    { name: "plan (text)", args: () => ["plan", "-f", "MANIFEST"] },
    {
      name: "plan (markdown) and the step summary",
      args: () => ["plan", "-f", "MANIFEST", "--format", "markdown"],
      markdown: true,
    },
    { name: "plan (json)", args: () => ["plan", "-f", "MANIFEST", "--format", "json"], json: true },
    { name: "apply (text)", args: () => ["apply", "-f", "MANIFEST", "--auto-approve"] },
    {
      name: "apply (json)",
      args: () => ["apply", "-f", "MANIFEST", "--auto-approve", "--format", "json"],
      json: true,
    },
    { name: "logs (text)", args: () => ["logs", "--project", "1", "--config", "1"] },
    { name: "logs (json)", args: () => ["logs", "--project", "1", "--config", "1", "--format", "json"] },
    {
      name: "frontend",
      args: (id) => [
        "frontend",
        "--project",
        "1",
        "--family",
        "pipeline_frontend_apps_configs",
        "--config",
        String(id),
      ],
    },
    { name: "job (text)", args: () => ["job", "--project", "1", "--config", "1", "--job", "sync"] },
    {
      name: "job (json)",
      args: () => ["job", "--project", "1", "--config", "1", "--job", "sync", "--format", "json"],
    },
    {
      name: "an error naming the record",
      args: () => ["logs", "--project", "1", "--config", HOSTILE],
    },
    { name: "export (printed)", args: () => ["export", "--project", "1"], yaml: true },
    {
      name: "export --all --templates (printed)",
      args: () => ["export", "--all", "--templates", "--family", "plugin_configs"],
      yaml: true,
    },
    { name: "export -o FILE", args: () => ["export", "--project", "1", "-o", "OUT"], toFile: true },
    // The drift a watch cycle names: the hostile record is one the manifest prunes.
    { name: "watch --once (text)", args: () => ["watch", "--once", "-f", "MANIFEST"] },
    {
      name: "watch --once (json)",
      args: () => ["watch", "--once", "-f", "MANIFEST", "--log-format", "json"],
      json: true,
    },
  ];

  it.for(rows)("$name", async ({ args, markdown, json, yaml, toFile }, { onTestFinished }) => {
    const { example, frontendId } = data();
    const server = await openServer(onTestFinished, "seed", { data: example });
    const dir = await temporaryDirectory();
    onTestFinished(() => dir.remove());
    const file = await dir.write("pcsync.yaml", pruning);
    const summary = `${dir.path}/summary.md`;
    const out = `${dir.path}/exported.yaml`;
    const result = await server.run(
      args(frontendId).map((arg) => (arg === "MANIFEST" ? file : arg === "OUT" ? out : arg)),
      { env: { NO_COLOR: "1", GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary } },
    );
    const output = `${result.stdout}\n${result.stderr}`;
    expect(unsafeIn(output), output).toEqual([]);
    if (markdown) {
      expect(autolinksIn(result.stdout)).toEqual([]);
      const written = await readFile(summary, "utf8");
      expect(unsafeIn(written)).toEqual([]);
      expect(autolinksIn(written)).toEqual([]);
    }
    if (json) expect(result.stdout).toContain(JSON.stringify(HOSTILE).slice(1, 7));
    if (json) expect(JSON.stringify(JSON.parse(result.stdout))).toContain(JSON.stringify(HOSTILE));
    if (yaml) {
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.stringify(parse(result.stdout))).toContain(JSON.stringify(HOSTILE));
    }
    if (toFile) {
      expect(result.code, result.stderr).toBe(0);
      const written = await readFile(out, "utf8");
      expect(written).toContain("\u202egnp.exe\u2066");
      expect(JSON.stringify(parse(written))).toContain(JSON.stringify(HOSTILE));
    }
  });
});
