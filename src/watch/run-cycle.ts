// One cycle of `pcsync watch`: take the stable manifest (a changed one once its content has
// stayed the same for --manifest-settle), validate it, read and plan through the same path as
// `plan`, and in heal mode apply the families in heal, but for the records left alone as flapping.
// A manifest that fails validation ends the cycle before any request: it can never lead to a write.

import type { ApiClient } from "../api/index.js";
import { PcsyncError } from "../errors.js";
import type { RunInput } from "../files/output-target.js";
import { isInputError } from "../input-error.js";
import { DEFAULT_KEPT_HEAL_JOURNALS } from "../journal/prune-heal-journals.js";
import { type DesiredState, formatDiagnostic } from "../manifest/index.js";
import type { ReadAndPlanOptions } from "../read/read-and-plan.js";
import { printDiagnostics } from "../run/load-manifest.js";
import { narrowDesiredState, planManifest } from "../run/plan-manifest.js";
import type { RunIo } from "../run/run-io.js";
import type { FamilyFinding } from "./family-finding.js";
import { healPlan, modesOf } from "./heal.js";
import type { FlapTracker } from "./heal-flapping.js";
import type { RolloutHold } from "./rollout-hold.js";
import type { WatchSettings } from "./run-watch.js";
import type { StableManifest } from "./stable-manifest.js";
import type { CycleResult } from "./watch-metrics.js";

/** The run's settings a cycle reads, and the parts run-watch.ts makes for it. */
export type CycleSettings = Pick<
  WatchSettings,
  "scope" | "planSettings" | "mode" | "keepHealJournals" | "createRule"
> & {
  client: ApiClient;
  /** The files the run reads (the manifests, var files, key file): heal's journals go elsewhere. */
  inputs: readonly RunInput[];
  io: RunIo;
  /** Stops the cycle: no new request starts, writes in flight finish. */
  signal: AbortSignal;
  /** The manifest to plan with: the last stable version. */
  manifest: StableManifest;
  /** Heal's memory of records it keeps putting back: they are left alone for a while. */
  flapping?: FlapTracker;
  /** Heal's memory of each family's manifest when last in sync: with `rollout:`, a change is held. */
  rolloutHold?: RolloutHold;
  /** Each project's plan as soon as it is made, before the cycle ends (its drift shows at once). */
  onProjectPlanned?: ReadAndPlanOptions["onProjectPlanned"];
};

export interface CycleReport {
  result: CycleResult;
  /** Undefined when the cycle ended before it could tell. */
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
  /** The journal of what heal wrote this cycle (`pcsync rollback --journal` undoes it). */
  journal?: string;
  /** The stop signal came during the cycle: its result is not counted. */
  interrupted: boolean;
  /** The cycle met a bug in pcsync (an error no user input explains): /readyz fails until a clean cycle. */
  internalError?: true;
}

/** A cycle that ended before it read and planned: nothing found, nothing healed. */
function endedEarly(
  result: CycleResult,
  problems: string[],
  manifestValid: boolean | undefined,
): CycleReport {
  const nothing = { findings: [], succeeded: [], healed: 0, refused: 0, interrupted: false };
  return { result, manifestValid, problems, ...nothing };
}

/** Runs cycles; remembers what it printed, so that unchanged manifest warnings are not repeated. */
export class CycleRunner {
  readonly #settings: CycleSettings;
  #printedDiagnostics = "";

  constructor(settings: CycleSettings) {
    this.#settings = settings;
  }

  async run(): Promise<CycleReport> {
    const { signal, scope, io, manifest } = this.#settings;
    try {
      const result = await manifest.current();
      const printed = [...result.errors, ...result.warnings].map(formatDiagnostic).join("\n");
      if (printed !== this.#printedDiagnostics) printDiagnostics(result, io);
      this.#printedDiagnostics = printed;
      if (result.errors.length > 0 || result.value === undefined) {
        return endedEarly("invalid_manifest", result.errors.map(formatDiagnostic), false);
      }
      let narrowed: DesiredState;
      try {
        narrowed = narrowDesiredState(result.value, scope);
      } catch (error) {
        // --project or --family that the manifest, as it now reads, does not have.
        if (isInputError(error, "usage")) return endedEarly("invalid_manifest", [error.message], false);
        throw error;
      }
      return await this.#planAndHeal(narrowed);
    } catch (error) {
      if (signal.aborted) return { ...endedEarly("failed", [], undefined), interrupted: true };
      if (isInputError(error, "manifest_invalid")) {
        return endedEarly("invalid_manifest", error.facts.diagnostics.map(formatDiagnostic), false);
      }
      if (error instanceof PcsyncError) return endedEarly("failed", [error.message], true);
      const message = `internal error (please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      return { ...endedEarly("failed", [message], true), internalError: true };
    }
  }

  async #planAndHeal(narrowed: DesiredState): Promise<CycleReport> {
    const { client, scope, inputs, io, mode, signal, onProjectPlanned } = this.#settings;
    const settings = this.#settings.planSettings();
    const { plan, current, desired, refused } = await planManifest(
      client,
      narrowed,
      scope,
      { ...settings, refuseFamilyOnly: true, onProjectPlanned },
      io,
    );
    const { flapping, rolloutHold } = this.#settings;
    const hold = flapping?.hold(plan) ?? { plan, held: new Map() };
    const modes = modesOf(desired, mode);
    const held = rolloutHold?.held(hold.plan, desired, modes) ?? [];
    const heal = await healPlan(client, hold.plan, current, modes, {
      concurrency: settings.concurrency,
      create: this.#settings.createRule?.(),
      signal,
      refused: [...(refused ?? []), ...held],
      journal: {
        cwd: io.cwd,
        inputs,
        secrets: io.secrets,
        keep: this.#settings.keepHealJournals ?? DEFAULT_KEPT_HEAL_JOURNALS,
      },
      onNote: (line) => io.stderr.write(`${line}\n`),
    });
    const findings = flapping?.observe(heal.findings, hold.held) ?? heal.findings;
    rolloutHold?.observe(findings, desired);
    const failed = (heal.report?.outcomes ?? []).filter(
      ({ status }) => status === "failed" || status === "unknown",
    );
    const failedProjects = new Set(failed.map((outcome) => outcome.project));
    const problems = failed.map(
      (outcome) =>
        `heal: ${outcome.action} ${outcome.name ?? `id ${outcome.id}`} in project ${outcome.project} ${outcome.family}: ${outcome.status}${outcome.message === undefined ? "" : ` (${outcome.message})`}`,
    );
    const result: CycleResult = problems.length > 0 ? "failed" : heal.refused > 0 ? "guarded" : "ok";
    const projects = [...new Set(plan.families.map((family) => family.project))];
    return {
      result,
      manifestValid: true,
      problems,
      findings,
      succeeded: projects.filter((project) => !failedProjects.has(project)),
      healed: heal.report?.done ?? 0,
      refused: heal.refused,
      ...(heal.journal === undefined ? {} : { journal: heal.journal }),
      interrupted: heal.report?.interrupted === true,
    };
  }
}
