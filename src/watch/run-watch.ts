// `pcsync watch` put together: one API client for the whole run (its rate limiter, and the rate
// it was cut to by the service's 429s, carry over from cycle to cycle), the cycle loop, the metrics and
// their endpoints, webhook events, the metrics file, and the signals.

import type { ApiClient } from "../api/index.js";
import type { CreateRule } from "../apply/proof-window.js";
import { EXIT_ERROR, EXIT_OK, type ExitCode, type InterruptSignal, SIGNAL_EXIT_CODES } from "../errors.js";
import type { DriftMode } from "../manifest/types.js";
import { metricsFileWriter } from "../notify/metrics-file.js";
import type { WebhookSender } from "../notify/webhook-sender.js";
import { loadManifest, type ManifestInput, runInputs } from "../run/load-manifest.js";
import type { PlanScope, PlanSettings } from "../run/plan-manifest.js";
import type { RunIo } from "../run/run-io.js";
import { compactHeap } from "./compact-heap.js";
import { formatCycleLine, type LogFormat, plural } from "./cycle-log.js";
import { FlapTracker } from "./heal-flapping.js";
import type { ListenAddress } from "./listen-address.js";
import { earlyDriftOf } from "./project-drift.js";
import { CycleRecorder, exitCodeOf } from "./record-cycle.js";
import { RolloutHold } from "./rollout-hold.js";
import { type CycleReport, CycleRunner } from "./run-cycle.js";
import { DEFAULT_MANIFEST_SETTLE_MS, digestManifestFiles, StableManifest } from "./stable-manifest.js";
import { WatchLoop } from "./watch-loop.js";
import { CYCLE_RESULTS, type CycleResult, createWatchMetrics, type WatchMetrics } from "./watch-metrics.js";
import { startWatchServer, type WatchServer } from "./watch-server.js";

export interface WatchSettings {
  /** The manifest files and variables, read again when they change. */
  manifest: ManifestInput;
  scope: PlanScope;
  /** The planner's settings, made again at each cycle (see CycleSettings). */
  planSettings: () => PlanSettings;
  intervalMs: number;
  jitterShare: number;
  mode: DriftMode;
  /** Undefined: no HTTP endpoints (--once without --listen). */
  listen: ListenAddress | undefined;
  once: boolean;
  metricsFile: string | undefined;
  logFormat: LogFormat;
  /** --manifest-settle: a changed manifest is used once its content has stayed the same this long. */
  manifestSettleMs?: number;
  /** --keep-heal-journals: the ended heal journals kept, the newest (0: all). */
  keepHealJournals?: number;
  /** How heal settles a failed create (--settle-timeout, --treat-5xx-as-in-flight), made as planSettings. */
  createRule?: (() => CreateRule) | undefined;
}

export interface WatchParts {
  /** Makes the client, given the stop signal and the request counter of the metrics. */
  createClient: (signal: AbortSignal, metrics: WatchMetrics) => Promise<ApiClient>;
  webhooks: WebhookSender | undefined;
}

/** How long a stop waits for webhook deliveries still queued. */
const WEBHOOK_DRAIN_MS = 10_000;

/**
 * Runs until SIGTERM or SIGINT (exit 0 once the cycle in progress, and its writes, have finished)
 * or, with --once, for one cycle (exit with plan --detailed-exitcode's codes).
 */
export async function runWatch(settings: WatchSettings, parts: WatchParts, io: RunIo): Promise<ExitCode> {
  const metrics = createWatchMetrics({ processMetrics: true, secrets: io.secrets });
  const stop = new AbortController();
  const client = await parts.createClient(stop.signal, metrics);
  const recorder = new CycleRecorder(metrics);
  const flags = settings.manifest;
  const inputs = runInputs(flags, { manifests: true });
  const writeMetricsFile =
    settings.metricsFile === undefined
      ? undefined
      : metricsFileWriter(settings.metricsFile, metrics, io, inputs, { warnOnce: false });
  const manifest = new StableManifest(
    {
      load: () => loadManifest(flags, io),
      digest: () => digestManifestFiles(flags.file, flags.varFile ?? [], io.cwd),
    },
    {
      stableForMs: settings.manifestSettleMs ?? DEFAULT_MANIFEST_SETTLE_MS,
      once: settings.once,
      notice: (line) => io.stderr.write(`pcsync watch: ${line}\n`),
    },
  );
  const runner = new CycleRunner({
    client,
    scope: settings.scope,
    planSettings: settings.planSettings,
    inputs,
    io,
    mode: settings.mode,
    signal: stop.signal,
    manifest,
    // Left alone first for two intervals: at least one cycle without a heal, whatever the jitter.
    flapping: new FlapTracker({ firstBackoffMs: 2 * settings.intervalMs }),
    rolloutHold: new RolloutHold(),
    keepHealJournals: settings.keepHealJournals,
    createRule: settings.createRule,
    onProjectPlanned: (part, desired) =>
      recorder.showProjectDrift(earlyDriftOf(part, desired, settings.mode)),
  });
  const counts = Object.fromEntries(CYCLE_RESULTS.map((result) => [result, 0])) as Record<
    CycleResult,
    number
  >;
  let healed = 0;
  let lastReport: CycleReport | undefined;
  let metricsFileFailed = false;

  const loop = new WatchLoop({
    intervalMs: settings.intervalMs,
    jitterShare: settings.jitterShare,
    once: settings.once,
    stop: stop.signal,
    // A change that has become stable between cycles is used at once, not an interval later.
    early: { nextAt: () => manifest.nextCheckAt(), check: () => manifest.check() },
    cycle: async () => {
      const started = performance.now();
      const report = await runner.run();
      const durationMs = performance.now() - started;
      if (report.interrupted && report.healed === 0) return;
      lastReport = report;
      counts[report.result] += 1;
      healed += report.healed;
      const at = new Date();
      for (const event of recorder.record(report, durationMs, at)) parts.webhooks?.send(event);
      io.stdout.write(
        formatCycleLine({ cycle: loop.cycles + 1, report, durationMs, at }, settings.logFormat),
      );
      if (settings.metricsFile !== undefined) {
        metricsFileFailed = !(await writeMetricsFile?.());
      }
      // A process that exits after its one cycle has no heap to keep small.
      if (!settings.once) compactHeap();
    },
  });

  let server: WatchServer | undefined;
  const signals = new SignalHandlers(io, stop, loop);
  try {
    if (settings.listen !== undefined) {
      server = await startWatchServer(settings.listen, metrics, {
        loop,
        intervalMs: settings.intervalMs,
        ready: () => recorder.ready,
        notReadyReason: () => recorder.notReadyReason,
      });
      io.stderr.write(`pcsync watch: serving /metrics, /healthz and /readyz on ${server.url}\n`);
    }
    signals.install();
    await loop.run();
  } finally {
    signals.dispose();
    await server?.close();
    const drained = (await parts.webhooks?.close(WEBHOOK_DRAIN_MS)) ?? true;
    if (!drained) io.stderr.write("warning: webhook events still queued at exit were not sent\n");
    await client.close();
  }

  if (settings.once) {
    // A signal that stopped the one cycle before it finished ends the run as it ends apply's.
    if (lastReport === undefined) {
      return signals.received === undefined ? EXIT_ERROR : SIGNAL_EXIT_CODES[signals.received];
    }
    return metricsFileFailed ? EXIT_ERROR : exitCodeOf(lastReport);
  }
  const tally = CYCLE_RESULTS.map((result) => `${counts[result]} ${result}`).join(", ");
  const webhookStats = parts.webhooks?.stats;
  const webhookTally =
    webhookStats === undefined
      ? ""
      : `; webhook events: ${webhookStats.delivered} delivered, ${webhookStats.failed} failed, ${webhookStats.dropped} dropped`;
  io.stderr.write(
    `pcsync watch: stopped${signals.received === undefined ? "" : ` by ${signals.received}`} after ${plural(loop.cycles, "cycle", "cycles")} (${tally}); ${plural(healed, "change", "changes")} healed${webhookTally}\n`,
  );
  return EXIT_OK;
}

/**
 * SIGTERM and SIGINT stop the loop: the cycle in progress finishes its writes in flight and starts
 * no new request; a second one exits at once. SIGHUP reads the manifest again and starts a cycle now.
 */
class SignalHandlers {
  received: InterruptSignal | undefined;
  readonly #io: RunIo;
  readonly #stop: AbortController;
  readonly #loop: WatchLoop;
  readonly #handlers: [NodeJS.Signals, () => void][];

  constructor(io: RunIo, stop: AbortController, loop: WatchLoop) {
    this.#io = io;
    this.#stop = stop;
    this.#loop = loop;
    this.#handlers = [
      ["SIGTERM", () => this.#onStop("SIGTERM")],
      ["SIGINT", () => this.#onStop("SIGINT")],
      ["SIGHUP", () => this.#onHangUp()],
    ];
  }

  install(): void {
    for (const [name, handler] of this.#handlers) process.on(name, handler);
  }

  dispose(): void {
    for (const [name, handler] of this.#handlers) process.off(name, handler);
  }

  #onStop(name: InterruptSignal): void {
    if (this.received !== undefined) {
      this.#io.stderr.write(
        `pcsync watch: ${name} received again: exiting at once. Writes in flight may or may not have been made; the next cycle (or \`pcsync plan\`) shows what the server holds.\n`,
      );
      process.exit(SIGNAL_EXIT_CODES[name]);
    }
    this.received = name;
    const busy = this.#loop.running
      ? "; the cycle in progress finishes its writes in flight and starts no new one"
      : "";
    this.#io.stderr.write(
      `pcsync watch: ${name} received: stopping${busy} (send it again to exit at once)\n`,
    );
    this.#stop.abort(new Error(`stopped by ${name}`));
  }

  #onHangUp(): void {
    this.#io.stderr.write(
      `pcsync watch: SIGHUP received: ${this.#loop.running ? "another cycle starts as soon as this one ends" : "starting a cycle now"}, reading the manifest again\n`,
    );
    this.#loop.trigger();
  }
}
