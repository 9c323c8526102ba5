// The `--metrics-file` of `watch` and of a rollout's `apply`, for node_exporter's textfile
// collector: pcsync's own metrics (node_exporter has the process ones), redacted, written whole.

import { stat } from "node:fs/promises";
import { dirname, extname, relative, resolve, sep } from "node:path";
import type { Registry } from "prom-client";
import { describeError } from "../errors.js";
import { outputRefused } from "../files/file-errors.js";
import { type RunInput, resolveOutputTarget } from "../files/output-target.js";
import { writeFileSafely } from "../files/write-file.js";
import type { SecretRegistry } from "../redact.js";

export async function renderOwnMetrics(metrics: {
  readonly registry: Registry;
  readonly secrets: SecretRegistry;
}): Promise<string> {
  return metrics.secrets.redact(await metrics.registry.metrics()).text;
}

/** Refuses, before a run writes anything, a `--metrics-file` it may not write (an input, a journal's, ...). */
export async function checkMetricsFile(
  path: string,
  options: { cwd: string; inputs: readonly RunInput[] },
): Promise<void> {
  const shown = `${path} (--metrics-file)`;
  const full = resolve(options.cwd, path);
  const inside = relative(resolve(options.cwd, ".pcsync"), full);
  const journals = !inside.startsWith("..") && !inside.startsWith(sep) && inside !== "";
  if (extname(full).toLowerCase() === ".jsonl" || journals)
    throw outputRefused(
      shown,
      "it would be one of pcsync's journals (*.jsonl, or under .pcsync/), which the metrics would replace: name the file *.prom, where node_exporter's textfile collector reads it",
    );
  await resolveOutputTarget(path, { ...options, shown });
  const folder = await stat(dirname(full)).catch(() => undefined);
  if (folder === undefined || !folder.isDirectory())
    throw outputRefused(shown, `its directory ${dirname(full)} does not exist`);
}

/** Atomic, so that a collector never reads half of it. A failure is a warning (the run goes on). */
export function metricsFileWriter(
  path: string,
  metrics: { readonly registry: Registry; readonly secrets: SecretRegistry },
  io: { cwd: string; stderr: { write(text: string): unknown } },
  inputs: readonly RunInput[],
  options: { warnOnce: boolean },
): () => Promise<boolean> {
  let warned = false;
  return async () => {
    try {
      await writeFileSafely(path, await renderOwnMetrics(metrics), { cwd: io.cwd, inputs });
      return true;
    } catch (error) {
      if (!(warned && options.warnOnce))
        io.stderr.write(`warning: --metrics-file: ${describeError(error)}\n`);
      warned = true;
      return false;
    }
  };
}
