// Every way output leaves a run, redacted by the one function (SecretRegistry.redact) with the
// run's own registry, passed in its io: a secret with white space in it (`Bearer <key>`) included.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiError } from "../src/api/service-error.js";
import { withOutputEdge } from "../src/cli/cli-io.js";
import { printPlan } from "../src/cli/print-plan.js";
import { appendStepSummary } from "../src/cli/step-summary.js";
import { renderOwnMetrics } from "../src/notify/metrics-file.js";
import type { Plan } from "../src/plan/types.js";
import { REDACTED, SecretRegistry } from "../src/redact.js";
import { createWatchMetrics, renderMetrics } from "../src/watch/watch-metrics.js";
import { captureStreams } from "./support/capture.js";
import { buildRepresentativePlan } from "./support/plans.js";

const SECRET = "Bearer phx_redaction_table_0123456789abcdef";

/** The representative plan, with the secret in a description the plan shows. */
function leakyPlan(): Plan {
  const text = JSON.stringify(buildRepresentativePlan());
  expect(text).toContain("Drops bots");
  return JSON.parse(text.replace("Drops bots", `Drops ${SECRET}`)) as Plan;
}

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "pcsync-redaction-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** A run's io behind its output edge, with the secret in its own registry only. */
function runIo(env: NodeJS.ProcessEnv = {}) {
  const streams = captureStreams();
  const secrets = new SecretRegistry();
  secrets.register(SECRET);
  const io = withOutputEdge({ stdout: streams.stdout, stderr: streams.stderr, env, cwd: directory, secrets });
  const output = () => {
    io.edge.finish();
    const { stdout, stderr } = streams.text();
    return `${stdout}${stderr}`;
  };
  return { io, output };
}

type Io = ReturnType<typeof runIo>["io"];

const PATHS: ReadonlyArray<[string, (io: Io, output: () => string) => Promise<string>]> = [
  [
    "the text plan",
    async (io, output) => {
      printPlan(leakyPlan(), "text", io);
      return output();
    },
  ],
  [
    "the markdown plan",
    async (io, output) => {
      printPlan(leakyPlan(), "markdown", io);
      return output();
    },
  ],
  [
    "the step summary",
    async (io) => {
      const file = join(directory, "summary.md");
      await appendStepSummary(
        leakyPlan(),
        { ...io, env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: file } },
        "t",
      );
      return await readFile(file, "utf8");
    },
  ],
  [
    "an error, written out and inspected",
    async (io, output) => {
      const error = apiError(
        { method: "GET", path: "/api/projects/1/plugin_configs/", secrets: io.secrets },
        {
          status: 401,
          serviceError: { type: "authentication_error", code: "x", detail: `refused ${SECRET}`, attr: null },
          attempts: 1,
        },
      );
      io.stderr.write(`pcsync: ${error.message}\n`);
      return `${output()}\n${inspect(error)}\n${JSON.stringify(error)}`;
    },
  ],
  [
    "the metrics, served and in the metrics file",
    async (io) => {
      const metrics = createWatchMetrics({ processMetrics: false, secrets: io.secrets });
      metrics.driftChanges.set({ project: `p ${SECRET}`, family: "plugin_configs" }, 1);
      return `${await renderMetrics(metrics)}\n${await renderOwnMetrics(metrics)}`;
    },
  ],
];

describe("redaction on every output path", () => {
  it.each(PATHS)("%s", async (_name, produce) => {
    const { io, output } = runIo();
    const text = await produce(io, output);
    expect(text).toContain(REDACTED);
    expect(text).not.toContain("phx_redaction_table");
  });

  it("the JSON plan, which is written exactly, is refused instead", () => {
    const { io } = runIo();
    expect(() => printPlan(leakyPlan(), "json", io)).toThrow(
      expect.objectContaining({ code: "secret_in_output" }),
    );
  });

  it("a run knows only its own secrets: another run's output is left as it is", () => {
    const other = runIo();
    other.io.secrets.register("phx_only_the_other_run_knows_this");
    const { io, output } = runIo();
    io.stdout.write("phx_only_the_other_run_knows_this\n");
    expect(output()).toContain("phx_only_the_other_run_knows_this");
  });
});
