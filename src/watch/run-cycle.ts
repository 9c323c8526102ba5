// One cycle of `pcsync watch`: validate the stable manifest, read and plan as `plan` does, and heal the
// families in heal but for flapping records. An invalid manifest ends the cycle before any request.

import { parseBaseUrl } from "../api/base-url.js";
import type { ApiClient } from "../api/index.js";
import type { CreateRule } from "../apply/proof-window.js";
import { PcsyncError } from "../errors.js";
import type { RunInput } from "../files/output-target.js";
import { isInputError } from "../input-error.js";
import { DEFAULT_KEPT_HEAL_JOURNALS } from "../journal/prune-heal-journals.js";
import { type DesiredState, formatDiagnostic } from "../manifest/index.js";
import type { DriftMode } from "../manifest/types.js";
import type { ReadAndPlanOptions } from "../read/read-and-plan.js";
import { waitForKilledRunsCreates } from "../run/late-writes.js";
import { printDiagnostics } from "../run/load-manifest.js";
import type { PlanScope, PlanSettings } from "../run/plan-manifest.js";
import { narrowDesiredState, planManifest } from "../run/plan-manifest.js";
import type { RunIo } from "../run/run-io.js";
import type { CycleReport } from "./cycle-log.js";
import { healPlan, modesOf } from "./heal.js";
import type { FlapTracker } from "./heal-flapping.js";
import type { RolloutHold } from "./rollout-hold.js";
import type { StableManifest } from "./stable-manifest.js";
import type { CycleResult } from "./watch-metrics.js";

export interface CycleSetup {
  scope: PlanScope;
  /** Made again each cycle: a value that cannot be used fails every cycle, as a fault of the run would. */
  planSettings: () => PlanSettings;
  /** The mode of the families whose manifest does not say `drift:`. */
  mode: DriftMode;
  keepHealJournals?: number;
  /** How heal settles a failed create (--settle-timeout, --treat-5xx-as-in-flight), made as planSettings. */
  createRule?: (() => CreateRule) | undefined;
}

export type CycleSettings = CycleSetup & {
  client: ApiClient;
  /** Each manifest version is then checked to name the same server. */
  serverFromManifest?: boolean | undefined;
  /** The files the run reads: heal's journals go elsewhere. */
  inputs: readonly RunInput[];
  io: RunIo;
  /** Stops the cycle: no new request starts, writes in flight finish. */
  signal: AbortSignal;
  manifest: StableManifest;
  flapping?: FlapTracker;
  rolloutHold?: RolloutHold;
  onProjectPlanned?: ReadAndPlanOptions["onProjectPlanned"];
};

function endedEarly(
  result: CycleResult,
  problems: string[],
  manifestValid: boolean | undefined,
): CycleReport {
  const nothing = { findings: [], succeeded: [], healed: 0, refused: 0, interrupted: false };
  return { result, manifestValid, problems, ...nothing };
}

/** Remembers what it printed, so that unchanged manifest warnings are not repeated. */
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
      // The client was made for the server the manifest named at the start: a version naming another
      // is not planned against the old one (nor is the key sent to the new one unasked).
      const moved = this.#settings.serverFromManifest === true ? this.#serverMoved(result.value) : undefined;
      if (moved !== undefined) return endedEarly("failed", [moved], true);
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

  /** Compared as the client would use it (a trailing slash or `/api` aside), shown without credentials. */
  #serverMoved(desired: DesiredState): string | undefined {
    const { client } = this.#settings;
    const connected = `this watcher connected to ${client.base.display} when it started: nothing is read or healed until it is restarted (or the manifest names that server again)`;
    if (desired.baseUrl === undefined)
      return `the manifest no longer names a server (server.base_url), and ${connected}`;
    let display: string;
    try {
      display = parseBaseUrl(desired.baseUrl, { allowInsecureHttp: true }).display;
    } catch (error) {
      return `the manifest's server.base_url is now one pcsync cannot use (${error instanceof PcsyncError ? error.message : "not a URL"}), and ${connected}`;
    }
    return display === client.base.display
      ? undefined
      : `the manifest's server.base_url is now ${display}, but ${connected}`;
  }

  async #planAndHeal(narrowed: DesiredState): Promise<CycleReport> {
    const { client, scope, inputs, io, mode, signal, onProjectPlanned } = this.#settings;
    const settings = this.#settings.planSettings();
    const planNow = () =>
      planManifest(client, narrowed, scope, { ...settings, refuseFamilyOnly: true, onProjectPlanned }, io);
    let planned = await planNow();
    const modes = modesOf(planned.desired, mode);
    // A create a killed run sent may still land: heal waits for it and plans again, not sending it twice.
    const waited =
      [...modes.values()].includes("heal") &&
      (await waitForKilledRunsCreates(client, io.cwd, planned.plan, {
        what: "Apply",
        reading: "the state again, so that this heal does not make it a second time",
        dryRun: false,
        onNote: (line) => io.stderr.write(`${line}\n`),
      }));
    if (waited) planned = await planNow();
    const { plan, current, desired, refused } = planned;
    const { flapping, rolloutHold } = this.#settings;
    const hold = flapping?.hold(plan) ?? { plan, held: new Map() };
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
