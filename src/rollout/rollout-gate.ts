// The health gate a rollout's `health:` asks for: each signal it names (the logs, a Prometheus
// query), and a project passes only when every one of them passes it.

import type { ApiClient } from "../api/index.js";
import type { PlanRollout } from "../plan/types.js";
import type { RunIo } from "../run/run-io.js";
import type { HealthGate } from "./health-gate.js";
import { createLogHealthGate } from "./log-health.js";

export function createRolloutGate(
  client: ApiClient,
  health: PlanRollout["health"],
  options: { concurrency: number; io: RunIo },
): HealthGate {
  return createLogHealthGate(client, health.logs, options.concurrency);
}
