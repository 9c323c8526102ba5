// A manifest cannot read the API key: `${PCSYNC_API_KEY}` however written (alone, inside a longer
// value, as a project id, with a default, even when a variable of that name is handed over), and
// any variable whose value holds the key (from --var-file, --var or PCSYNC_VAR_*) is refused at its
// file:line:col, before any request, by validate, plan and apply; the key appears in no output or
// file. The runs are in-process, on a CLI of the test's own (its own registry of secrets).

import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { runCliInProcess } from "../support/in-process.js";
import { findLeaks, type Shown } from "../support/leaks.js";
import { KEY, reliabilityData } from "../support/scenario.js";
import { openWorkspace } from "../support/workspace.js";

const NEVER =
  "the API key is never interpolated into a manifest (plans, pull-request comments and logs would show it)";

/** A manifest whose one config's description is `description` (a YAML double-quoted string, line 8). */
function manifestWithDescription(description: string): string {
  return `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: 1
          description: "${description}"
`;
}

interface Attempt {
  name: string;
  manifest: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  files?: Record<string, string>;
  /** The one diagnostic expected, as printed (`file:line:col: message`). */
  error: string;
  /** validate takes no --api-key-file: attempts that need it are run with plan and apply only. */
  commands?: string[];
}

const reserved = `\${PCSYNC_API_KEY} is refused: ${NEVER}; pcsync reads the key only to authenticate`;
const holdsKey = (name: string, origin: string) =>
  `the value of ${name} (from ${origin}) contains the API key; ${NEVER}. Give ${name} another value`;

const attempts: Attempt[] = [
  {
    name: "${PCSYNC_API_KEY} as a value",
    manifest: manifestWithDescription("${PCSYNC_API_KEY}"),
    error: `pcsync.yaml:8:25: ${reserved}`,
  },
  {
    name: "${PCSYNC_API_KEY} inside a longer string",
    manifest: manifestWithDescription("x-${PCSYNC_API_KEY}-y"),
    error: `pcsync.yaml:8:27: ${reserved}`,
  },
  {
    name: "${PCSYNC_API_KEY} as a project key",
    manifest: 'version: 1\nprojects:\n  "${PCSYNC_API_KEY}":\n    plugin_configs:\n      configs: []\n',
    error: `pcsync.yaml:3:4: ${reserved}`,
  },
  {
    name: "${PCSYNC_API_KEY:-default}",
    manifest: manifestWithDescription("${PCSYNC_API_KEY:-none}"),
    error: `pcsync.yaml:8:25: ${reserved}`,
  },
  {
    name: "${PCSYNC_API_KEY} with PCSYNC_VAR_PCSYNC_API_KEY and --var PCSYNC_API_KEY set to the key",
    manifest: manifestWithDescription("${PCSYNC_API_KEY}"),
    env: { PCSYNC_VAR_PCSYNC_API_KEY: KEY },
    args: ["--var", `PCSYNC_API_KEY=${KEY}`],
    error: `pcsync.yaml:8:25: ${reserved}`,
  },
  {
    name: "a --var-file holding the key",
    manifest: manifestWithDescription("${TOKEN}"),
    files: { "vars.yaml": `# deploy values\nTOKEN: "${KEY}"\n` },
    args: ["--var-file", "vars.yaml"],
    error: `pcsync.yaml:8:25: ${holdsKey("TOKEN", "vars.yaml:2:1")}`,
  },
  {
    name: "--var NAME=<key>",
    manifest: manifestWithDescription("${TOKEN}"),
    args: ["--var", `TOKEN=${KEY}`],
    error: `pcsync.yaml:8:25: ${holdsKey("TOKEN", "--var TOKEN")}`,
  },
  {
    name: "PCSYNC_VAR_X equal to the key",
    manifest: manifestWithDescription("${X}"),
    env: { PCSYNC_VAR_X: KEY },
    error: `pcsync.yaml:8:25: ${holdsKey("X", "PCSYNC_VAR_X")}`,
  },
  {
    name: "PCSYNC_VAR_X holding the key URL-encoded",
    manifest: manifestWithDescription("see ${X}"),
    env: { PCSYNC_VAR_X: `https://h/?k=${encodeURIComponent(KEY)}` },
    error: `pcsync.yaml:8:29: ${holdsKey("X", "PCSYNC_VAR_X")}`,
  },
  {
    name: "two variables that spell the key together",
    manifest: manifestWithDescription("${A}${B}"),
    env: { PCSYNC_VAR_A: KEY.slice(0, 18), PCSYNC_VAR_B: KEY.slice(18) },
    error: `pcsync.yaml:8:24: after interpolation this text contains the API key; ${NEVER}. Check the variables it uses`,
  },
  {
    name: "--var equal to the key read from --api-key-file",
    manifest: manifestWithDescription("${TOKEN}"),
    files: { "key.txt": `${KEY}\n` },
    env: { PCSYNC_API_KEY: undefined },
    args: ["--api-key-file", "key.txt", "--var", `TOKEN=${KEY}`],
    error: `pcsync.yaml:8:25: ${holdsKey("TOKEN", "--var TOKEN")}`,
    commands: ["plan", "apply"],
  },
];

/**
 * A directory holding the manifest and `files`, an emulator and a CLI, all the test's own. The
 * attempt's runs share the CLI as they share the environment: none registers a secret that the
 * others would not register themselves.
 */
async function openAttempt(
  onTestFinished: TestContext["onTestFinished"],
  manifest: string,
  files: Record<string, string> = {},
) {
  const { directory, defer } = await openWorkspace(onTestFinished);
  const emulator = await startEmulator({ data: reliabilityData() });
  defer(() => emulator.close());
  await writeFile(join(directory, "pcsync.yaml"), manifest);
  for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
  return { directory, emulator, run: runCliInProcess };
}

/** The files a run may have written (plan, step summary), the manifest and given files excepted. */
async function writtenFiles(directory: string, given: Record<string, string>): Promise<string[]> {
  const names = await readdir(directory);
  return names.filter((name) => name !== "pcsync.yaml" && !(name in given));
}

describe("the API key cannot be interpolated", () => {
  it.concurrent.for(attempts)(
    "$name: refused at its position, the key shown nowhere, no request made",
    async (attempt, { onTestFinished }) => {
      const { directory, emulator, run } = await openAttempt(onTestFinished, attempt.manifest, attempt.files);
      const summary = join(directory, "step-summary.md");
      const env: NodeJS.ProcessEnv = {
        PCSYNC_BASE_URL: emulator.url,
        PCSYNC_API_KEY: KEY,
        GITHUB_ACTIONS: "true",
        GITHUB_STEP_SUMMARY: summary,
        ...attempt.env,
      };
      const [, line, col, message] = /^pcsync\.yaml:(\d+):(\d+): (.*)$/.exec(attempt.error) ?? [];
      const annotation = `::error file=pcsync.yaml,line=${line},col=${col}::${message}`;
      const runs: Record<string, string[]> = {
        validate: ["validate"],
        plan: ["plan", "--format", "markdown", "--out", "plan.json", "--verbose"],
        apply: ["apply", "--auto-approve", "--format", "json", "--verbose"],
      };
      const results = [];
      for (const command of attempt.commands ?? ["validate", "plan", "apply"]) {
        const args = [...(runs[command] ?? []), ...(attempt.args ?? [])];
        const result = await run(args, { env, cwd: directory });
        results.push({ label: `${attempt.name}: pcsync ${command}`, ...result });
      }
      // The key first: shown anywhere is the failure that matters most.
      const written = await writtenFiles(directory, attempt.files ?? {});
      const shown: Shown[] = results.flatMap((result) => [
        { label: `${result.label} stdout`, text: result.stdout },
        { label: `${result.label} stderr`, text: result.stderr },
      ]);
      for (const name of written)
        shown.push({ label: `file ${name}`, text: await readFile(join(directory, name), "utf8") });
      expect(findLeaks(KEY, shown)).toEqual([]);
      for (const result of results) {
        expect(result.code, `${result.label}\n${result.stderr}`).toBe(1);
        expect(result.stdout, result.label).toBe("");
        expect(result.stderr.split("\n"), result.label).toEqual([
          attempt.error,
          annotation,
          "pcsync: manifest invalid: 1 error in 1 file",
          "",
        ]);
      }
      // Refused while loading the manifest: no plan saved, no summary written, no request made.
      expect(written).toEqual([]);
      expect(emulator.requestLog).toEqual([]);
    },
  );

  it("while a variable that does not hold the key is interpolated as usual", async ({ onTestFinished }) => {
    const { directory, emulator, run } = await openAttempt(
      onTestFinished,
      manifestWithDescription("x-${DESC}-y"),
      {
        "vars.yaml": "DESC: from the var file\n",
      },
    );
    const env = {
      PCSYNC_BASE_URL: emulator.url,
      PCSYNC_API_KEY: KEY,
      PCSYNC_VAR_DESC: "from the environment",
    };
    const fromFile = await run(["plan", "--var-file", "vars.yaml"], { env, cwd: directory });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toContain('"x-from the var file-y"');
    const fromFlag = await run(["plan", "--var-file", "vars.yaml", "--var", "DESC=flag"], {
      env,
      cwd: directory,
    });
    expect(fromFlag.stdout).toContain('"x-flag-y"');
    const shown = [fromFile.stdout, fromFile.stderr, fromFlag.stdout, fromFlag.stderr].join("\n");
    expect(findLeaks(KEY, [{ label: "control", text: shown }])).toEqual([]);
    expect(await readFile(join(directory, "vars.yaml"), "utf8")).toBe("DESC: from the var file\n");
  });
});
