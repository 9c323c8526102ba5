// The memory a big manifest costs: the built `pcsync validate` of one YAML file of 60 MB (a size
// once measured at 1.7 GB of peak RSS), held to a bound of 600 MB (ten times the file), and of
// 6 MB for a quick look. The configs carry what users write: a name, a plugin, enabled, a
// description, and a comment now and then.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FAMILY_NAMES } from "../src/families.js";
import type { Row, Scenario } from "./harness.js";
import { expectSuccess, ms, runCli, withTempDir } from "./scenarios-manifest.js";

const MIB = 2 ** 20;
/** Configs per family: a project holds two families of this many. */
const CONFIGS_PER_FAMILY = 1000;

/**
 * A manifest of about `bytes` bytes, and how many configs it holds. `withVariable`: its first
 * description is written `${PREFIX:-...}`, which takes the loader's other path (a parse tree).
 */
export function largeManifest(bytes: number, withVariable = false): { yaml: string; configs: number } {
  const chunks: string[] = ["version: 1\nprojects:\n"];
  let size = chunks[0]?.length ?? 0;
  let configs = 0;
  for (let project = 1; size < bytes; project += 1) {
    const head = `  "${project}":\n`;
    chunks.push(head);
    size += head.length;
    for (const family of FAMILY_NAMES) {
      const lines = [`    ${family}:\n      prune: true\n      configs:\n`];
      for (let index = 1; index <= CONFIGS_PER_FAMILY; index += 1) {
        const comment = index % 50 === 1 ? `        # batch ${index} of project ${project}\n` : "";
        const sends = withVariable && configs === 0 ? "${PREFIX:-Sends}" : "Sends";
        lines.push(
          `${comment}        - name: Config ${project}-${family.length}-${index}\n          plugin: ${(index % 40) + 1}\n          enabled: ${index % 3 !== 0}\n          description: ${sends} events of project ${project} to destination ${index}\n`,
        );
        configs += 1;
      }
      const text = lines.join("");
      chunks.push(text);
      size += text.length;
    }
  }
  return { yaml: chunks.join(""), configs };
}

const mb = (kilobytes: number) => `${Math.round(kilobytes / 1024).toLocaleString("en-US")} MB`;

function validateLargeScenario(
  sizeMb: number,
  boundMb: number | undefined,
  isDefault: boolean,
  withVariable = false,
): Scenario {
  return {
    id: `validate-${sizeMb}mb${withVariable ? "-vars" : ""}`,
    title: `validate: the built CLI on one manifest file of ${sizeMb} MB${withVariable ? " with one ${NAME}" : ""}`,
    default: isDefault,
    async run() {
      return withTempDir(async (directory) => {
        const file = join(directory, "pcsync.yaml");
        const { yaml, configs } = largeManifest(sizeMb * MIB, withVariable);
        await writeFile(file, yaml);
        const run = expectSuccess(await runCli(["validate", "-f", file]), `pcsync validate -f ${file}`);
        const rows: Row[] = [
          {
            metric: "manifest size",
            value: `${(yaml.length / MIB).toFixed(1)} MB, ${configs.toLocaleString("en-US")} configs`,
          },
          { metric: "validate wall time", value: ms(run.wallMs) },
          { metric: "validate CPU time", value: ms(run.cpuMs) },
          {
            metric: "validate peak RSS",
            value: mb(run.peakRssKb),
            ...(boundMb === undefined
              ? {}
              : { target: `< ${boundMb.toLocaleString("en-US")} MB`, pass: run.peakRssKb < boundMb * 1024 }),
          },
          {
            metric: "peak RSS per MB of manifest",
            value: `${(run.peakRssKb / 1024 / (yaml.length / MIB)).toFixed(1)} MB`,
          },
        ];
        return { id: this.id, title: this.title, rows };
      });
    },
  };
}

/** The bound on the 60 MB file's peak RSS: ten times the file. */
const BOUND_60_MB = 600;

export const LARGE_MANIFEST_SCENARIOS: readonly Scenario[] = [
  validateLargeScenario(6, undefined, false),
  validateLargeScenario(60, BOUND_60_MB, false),
  validateLargeScenario(60, BOUND_60_MB, false, true),
];
