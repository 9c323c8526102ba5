// The health gate a rollout's `health:` asks for: each signal it names (the logs, a Prometheus
// query), and a project passes only when every one of them passes it.

import type { ApiClient, SecretRegistry } from "../api/index.js";
import { ROLLOUT_DEFAULTS } from "../manifest/rollout-defaults.js";
import type { PlanRollout } from "../plan/types.js";
import type { HealthGate, ProjectHealth, WaveToJudge } from "./health-gate.js";
import { createLogHealthGate } from "./log-health.js";
import { createPrometheusHealthGate, prometheusAuthorization } from "./prometheus-health.js";

/** Where the signals' credentials come from, and whether they may go over plain http. */
export interface GateCredentialSources {
  env: NodeJS.ProcessEnv;
  /** Each credential read is registered here: no output holds it. */
  secrets: SecretRegistry;
  allowInsecureHttp: boolean;
}

/**
 * The credentials the signals of `health` need, read now: one that cannot be read refuses the run
 * (InputError) before anything is written. `apply` also calls it before asking for approval.
 */
export function readGateCredentials(
  health: PlanRollout["health"],
  sources: GateCredentialSources,
): { prometheus?: string | undefined } {
  const { prometheus } = health;
  if (prometheus === undefined) return {};
  const { env, secrets, allowInsecureHttp } = sources;
  return { prometheus: prometheusAuthorization(prometheus, env, secrets, allowInsecureHttp) };
}

/** The gate `health` asks for, its credentials read first (readGateCredentials). */
export function createRolloutGate(
  client: ApiClient,
  health: PlanRollout["health"],
  options: GateCredentialSources & { concurrency: number },
): HealthGate {
  const credentials = readGateCredentials(health, options);
  const gates: HealthGate[] = [];
  if (health.logs !== undefined) gates.push(createLogHealthGate(client, health.logs, options.concurrency));
  if (health.prometheus !== undefined) {
    gates.push(
      createPrometheusHealthGate(health.prometheus, {
        concurrency: options.concurrency,
        proxyEnvironment: options.env,
        authorization: credentials.prometheus,
      }),
    );
  }
  const [only] = gates;
  // A plan names a signal (the manifest fills `logs` in when it names none); one that does not
  // is judged on the logs by their defaults, never on nothing.
  if (only === undefined) {
    const { maxErrorRatio, minEntries, allowUnknown } = ROLLOUT_DEFAULTS;
    return createLogHealthGate(client, { maxErrorRatio, minEntries, allowUnknown }, options.concurrency);
  }
  return gates.length === 1 ? only : combineGates(gates);
}

function combineGates(gates: readonly HealthGate[]): HealthGate {
  return {
    signal: gates.map((gate) => gate.signal).join("+"),
    async judge(wave: WaveToJudge, abort: AbortSignal): Promise<ProjectHealth[]> {
      const verdicts: ProjectHealth[][] = [];
      for (const gate of gates) verdicts.push(await gate.judge(wave, abort));
      return wave.projects.map(({ project }) =>
        combineVerdicts(
          project,
          gates.map((gate, index) => ({
            signal: gate.signal,
            verdict: verdicts[index]?.find((verdict) => verdict.project === project),
          })),
        ),
      );
    },
  };
}

/** A project's verdict from each signal's: it passes only if each passes; the worst status shows. */
export function combineVerdicts(
  project: string,
  bySignal: readonly { signal: string; verdict: ProjectHealth | undefined }[],
): ProjectHealth {
  const given = bySignal.flatMap(({ signal, verdict }) =>
    verdict === undefined ? [] : [{ signal, verdict }],
  );
  const statuses = given.map(({ verdict }) => verdict.status);
  const passed = given.length === bySignal.length && given.every(({ verdict }) => verdict.passed);
  const status: ProjectHealth["status"] = statuses.includes("fail")
    ? "fail"
    : statuses.includes("unknown") || !passed
      ? "unknown"
      : statuses.every((entry) => entry === "nothing_to_judge")
        ? "nothing_to_judge"
        : "pass";
  const figures: Record<string, number> = {};
  for (const { signal, verdict } of given)
    for (const [key, value] of Object.entries(verdict.figures)) figures[`${signal}_${key}`] = value;
  return {
    project,
    status,
    passed,
    figures,
    summary: bySignal
      .map(({ signal, verdict }) => `${signal}: ${verdict?.summary ?? "no verdict; fails"}`)
      .join("; "),
  };
}
