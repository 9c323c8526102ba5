// One cycle of `pcsync watch`: read the manifest again (once its files have settled), validate
// it, read and plan through the same path as `plan`, and in heal mode apply the families in heal.
// A manifest that fails validation ends the cycle before any request: it can never lead to a write.

import type { ApiClient } from "../api/index.js";
import type { CliIo } from "../cli/cli-io.js";
import type { ConnectionFlags } from "../cli/connection.js";
import { concurrencyOf } from "../cli/connection.js";
import { loadManifestsFromFlags, type ManifestFlags, printDiagnostics } from "../cli/manifest-options.js";
import { narrowDesiredState, planFromFlags, type ScopeFlags } from "../cli/scope-options.js";
import { PcsyncError, UsageError } from "../errors.js";
import { type DesiredState, type DriftMode, formatDiagnostic, ManifestError } from "../manifest/index.js";
import type { ReadAndPlanOptions } from "../read/read-and-plan.js";
import { healPlan, modesOf } from "./heal.js";
import { loadSettledManifests, type SettleOptions } from "./settled-manifest.js";
import type { FamilyFinding } from "./watch-events.js";
import type { CycleResult } from "./watch-metrics.js";

export type CycleFlags = ScopeFlags & ConnectionFlags & ManifestFlags;

export interface CycleSettings {
  client: ApiClient;
  flags: CycleFlags;
  io: CliIo;
  /** The mode of the families whose manifest does not say `drift:`. */
  mode: DriftMode;
  /** Stops the cycle: no new request starts, writes in flight finish. */
  signal: AbortSignal;
  settle: SettleOptions;
  /** Each project's plan as soon as it is made, before the cycle ends (its drift shows at once). */
  onProjectPlanned?: ReadAndPlanOptions["onProjectPlanned"];
}

export interface CycleReport {
  result: CycleResult;
  /** Undefined when the cycle ended before it could tell (manifest files still changing). */
  manifestValid: boolean | undefined;
  /** The manifest's errors (file:line:col: message), or the failure, in words. */
  problems: string[];
  /** Every family read and planned, with what drifts and what heal did. */
  findings: FamilyFinding[];
  /** Projects read and planned (and healed, in heal mode) without error. */
  succeeded: string[];
  /** Changes heal applied, and families it was refused for. */
  healed: number;
  refused: number;
  /** The stop signal came during the cycle: its result is not counted. */
  interrupted: boolean;
  /** The cycle met a bug in pcsync (an error no user input explains): /readyz fails until a clean cycle. */
  internalError?: true;
}

function endedEarly(
  result: CycleResult,
  problems: string[],
  manifestValid: boolean | undefined,
): CycleReport {
  return {
    result,
    manifestValid,
    problems,
    findings: [],
    succeeded: [],
    healed: 0,
    refused: 0,
    interrupted: false,
  };
}

/** Runs cycles; remembers what it printed, so that unchanged manifest warnings are not repeated. */
export class CycleRunner {
  readonly #settings: CycleSettings;
  #printedDiagnostics = "";

  constructor(settings: CycleSettings) {
    this.#settings = settings;
  }

  async run(): Promise<CycleReport> {
    const { signal } = this.#settings;
    try {
      const loaded = await this.#loadManifest();
      if ("report" in loaded) return loaded.report;
      return await this.#planAndHeal(loaded.desired);
    } catch (error) {
      if (signal.aborted) return { ...endedEarly("failed", [], undefined), interrupted: true };
      if (error instanceof ManifestError) {
        return endedEarly("invalid_manifest", error.diagnostics.map(formatDiagnostic), false);
      }
      if (error instanceof PcsyncError) return endedEarly("failed", [error.message], true);
      const message = `internal error (please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      return { ...endedEarly("failed", [message], true), internalError: true };
    }
  }

  async #loadManifest(): Promise<{ desired: DesiredState } | { report: CycleReport }> {
    const { flags, io, settle } = this.#settings;
    const loaded = await loadSettledManifests(() => loadManifestsFromFlags(flags, io), io.cwd, settle);
    if (!loaded.settled) {
      return {
        report: endedEarly(
          "failed",
          [
            `the manifest files were still being written after ${Math.round(loaded.waitedMs / 1000)} s; not used this cycle (write them to a temporary file and rename it into place)`,
          ],
          undefined,
        ),
      };
    }
    const { result } = loaded;
    const printed = [...result.errors, ...result.warnings].map(formatDiagnostic).join("\n");
    if (printed !== this.#printedDiagnostics) printDiagnostics(result, io);
    this.#printedDiagnostics = printed;
    if (result.errors.length > 0 || result.value === undefined) {
      return { report: endedEarly("invalid_manifest", result.errors.map(formatDiagnostic), false) };
    }
    try {
      return { desired: narrowDesiredState(result.value, flags) };
    } catch (error) {
      // --project or --family that the manifest, as it now reads, does not have.
      if (error instanceof UsageError)
        return { report: endedEarly("invalid_manifest", [error.message], false) };
      throw error;
    }
  }

  async #planAndHeal(narrowed: DesiredState): Promise<CycleReport> {
    const { client, flags, io, mode, signal, onProjectPlanned } = this.#settings;
    const { plan, current, desired, refused } = await planFromFlags(client, narrowed, flags, io, {
      refuseFamilyOnly: true,
      onProjectPlanned,
    });
    const heal = await healPlan(client, plan, current, modesOf(desired, mode), {
      concurrency: concurrencyOf(flags),
      signal,
      refused,
    });
    const failedProjects = new Set<string>();
    const problems: string[] = [];
    for (const outcome of heal.report?.outcomes ?? []) {
      if (outcome.status !== "failed" && outcome.status !== "unknown") continue;
      failedProjects.add(outcome.project);
      problems.push(
        `heal: ${outcome.action} ${outcome.name ?? `id ${outcome.id}`} in project ${outcome.project} ${outcome.family}: ${outcome.status}${outcome.message === undefined ? "" : ` (${outcome.message})`}`,
      );
    }
    const result: CycleResult = problems.length > 0 ? "failed" : heal.refused > 0 ? "guarded" : "ok";
    const projects = [...new Set(plan.families.map((family) => family.project))];
    return {
      result,
      manifestValid: true,
      problems,
      findings: heal.findings,
      succeeded: projects.filter((project) => !failedProjects.has(project)),
      healed: heal.report?.done ?? 0,
      refused: heal.refused,
      interrupted: heal.report?.interrupted === true,
    };
  }
}
