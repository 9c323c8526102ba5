// `pcsync watch` put together: one API client for the whole run (so the rate a 429 cut it to carries
// over between cycles), the cycle loop, metrics and their endpoints, webhooks, and the signals.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ApiClient } from "../api/index.js";
import { EXIT_ERROR, EXIT_OK, type ExitCode, type InterruptSignal, SIGNAL_EXIT_CODES } from "../errors.js";
import { metricsFileWriter } from "../notify/metrics-file.js";
import type { WebhookSender } from "../notify/webhook-sender.js";
import { plural } from "../plural.js";
import { loadManifest, type ManifestInput, runInputs } from "../run/load-manifest.js";
import type { RunIo } from "../run/run-io.js";
import { type CycleReport, formatCycleLine, type LogFormat } from "./cycle-log.js";
import { earlyDriftOf } from "./heal.js";
import { FlapTracker } from "./heal-flapping.js";
import type { ListenAddress } from "./listen-address.js";
import { CycleRecorder, exitCodeOf } from "./record-cycle.js";
import { DEFAULT_ROLLOUT_SETTLE_MS, RolloutHold } from "./rollout-hold.js";
import { CycleRunner, type CycleSetup } from "./run-cycle.js";
import { DEFAULT_MANIFEST_SETTLE_MS, digestManifestFiles, StableManifest } from "./stable-manifest.js";
import { WatchLoop } from "./watch-loop.js";
import { CYCLE_RESULTS, type CycleResult, createWatchMetrics, type WatchMetrics } from "./watch-metrics.js";
import { startWatchServer, type WatchServer } from "./watch-server.js";

export interface WatchSettings extends CycleSetup {
  manifest: ManifestInput;
  intervalMs: number;
  jitterShare: number;
  /** Undefined: no HTTP endpoints (--once without --listen). */
  listen: ListenAddress | undefined;
  once: boolean;
  metricsFile: string | undefined;
  logFormat: LogFormat;
  manifestSettleMs?: number;
  rolloutSettleMs?: number;
}

export interface WatchParts {
  /** `serverFromManifest`: the base URL came from the manifest's server.base_url. */
  createClient: (
    signal: AbortSignal,
    metrics: WatchMetrics,
  ) => Promise<{ client: ApiClient; serverFromManifest?: boolean }>;
  webhooks: WebhookSender | undefined;
  /** Whether a SIGHUP came before the watcher listened (the binary holds SIGHUP for watch from its start). */
  earlyHangUp?: () => boolean;
}

/** How long a stop waits for webhook deliveries still queued. */
const WEBHOOK_DRAIN_MS = 10_000;

/** Runs until SIGTERM or SIGINT, or with --once for one cycle (exit with plan --detailed-exitcode's codes). */
export async function runWatch(settings: WatchSettings, parts: WatchParts, io: RunIo): Promise<ExitCode> {
  const metrics = createWatchMetrics({ processMetrics: true, secrets: io.secrets });
  const stop = new AbortController();
  const { client, serverFromManifest } = await parts.createClient(stop.signal, metrics);
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
    ...settings,
    client,
    serverFromManifest,
    inputs,
    io,
    signal: stop.signal,
    manifest,
    // Left alone first for two intervals: at least one cycle without a heal, whatever the jitter.
    flapping: new FlapTracker({ firstBackoffMs: 2 * settings.intervalMs }),
    rolloutHold: new RolloutHold({ settleMs: settings.rolloutSettleMs ?? DEFAULT_ROLLOUT_SETTLE_MS }),
    onProjectPlanned: (part, desired) =>
      recorder.showProjectDrift(earlyDriftOf(part, desired, settings.mode)),
  });
  const counts = new Map<CycleResult, number>();
  let healed = 0;
  // Cycles the stop cut short before they wrote: the loop counts them, the results do not.
  let interrupted = 0;
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
      if (report.interrupted && report.healed === 0) {
        interrupted += 1;
        return;
      }
      lastReport = report;
      counts.set(report.result, (counts.get(report.result) ?? 0) + 1);
      healed += report.healed;
      const at = new Date();
      for (const event of recorder.record(report, durationMs, at)) parts.webhooks?.send(event);
      io.stdout.write(
        formatCycleLine({ cycle: loop.cycles + 1, report, durationMs, at }, settings.logFormat),
      );
      if (writeMetricsFile !== undefined) metricsFileFailed = !(await writeMetricsFile());
      // A process that exits after its one cycle has no heap to keep small.
      if (!settings.once) compactHeap();
    },
  });

  let server: WatchServer | undefined;
  let signals: ReturnType<typeof handleSignals> | undefined;
  try {
    if (settings.listen !== undefined) {
      server = await startWatchServer(settings.listen, metrics, {
        loop,
        intervalMs: settings.intervalMs,
        requestBoundMs: client.longestRequestMs,
        lastAttemptAt: () => metrics.progress.lastAttemptAt,
        ready: () => recorder.ready,
        notReadyReason: () => recorder.notReadyReason,
      });
      io.stderr.write(`pcsync watch: serving /metrics, /healthz and /readyz on ${server.url}\n`);
    }
    signals = handleSignals(io, stop, loop, parts.earlyHangUp);
    await loop.run();
  } finally {
    signals?.stopListening();
    await server?.close();
    const drained = (await parts.webhooks?.close(WEBHOOK_DRAIN_MS)) ?? true;
    if (!drained) io.stderr.write("warning: webhook events still queued at exit were not sent\n");
    await client.close();
    signals?.dispose();
  }

  const received = signals?.received();
  if (settings.once) {
    // A signal that stopped the one cycle before it finished ends the run as it ends apply's.
    if (lastReport === undefined) {
      return received === undefined ? EXIT_ERROR : SIGNAL_EXIT_CODES[received];
    }
    return metricsFileFailed ? EXIT_ERROR : exitCodeOf(lastReport);
  }
  // The summary adds up to the cycles it names: one the stop cut short (at most the last) is said.
  const tally = [
    ...CYCLE_RESULTS.map((result) => `${counts.get(result) ?? 0} ${result}`),
    ...(interrupted > 0 ? [`${interrupted} interrupted`] : []),
  ].join(", ");
  const webhookStats = parts.webhooks?.stats;
  const webhookTally =
    webhookStats === undefined
      ? ""
      : `; webhook events: ${webhookStats.delivered} delivered, ${webhookStats.failed} failed, ${webhookStats.dropped} dropped`;
  io.stderr.write(
    `pcsync watch: stopped${received === undefined ? "" : ` by ${received}`} after ${plural(loop.cycles, "cycle", "cycles")} (${tally}); ${plural(healed, "change", "changes")} healed${webhookTally}\n`,
  );
  return EXIT_OK;
}

/**
 * SIGTERM and SIGINT stop the loop after the writes in flight; a second exits at once. SIGHUP starts a
 * cycle now; one while starting is what the first cycle does anyway, one while stopping is ignored.
 */
function handleSignals(io: RunIo, stop: AbortController, loop: WatchLoop, earlyHangUp?: () => boolean) {
  let received: InterruptSignal | undefined;
  let stopping = false;
  const onStop = (name: InterruptSignal) => {
    if (received !== undefined) {
      io.stderr.write(
        `pcsync watch: ${name} received again: exiting at once. Writes in flight may or may not have been made; the next cycle (or \`pcsync plan\`) shows what the server holds.\n`,
      );
      process.exit(SIGNAL_EXIT_CODES[name]);
    }
    received = name;
    stopping = true;
    const busy = loop.running
      ? "; the cycle in progress finishes its writes in flight and starts no new one"
      : "";
    io.stderr.write(`pcsync watch: ${name} received: stopping${busy} (send it again to exit at once)\n`);
    stop.abort(new Error(`stopped by ${name}`));
  };
  const onHangUp = () => {
    if (stopping) {
      io.stderr.write("pcsync watch: SIGHUP received while stopping: ignored\n");
      return;
    }
    io.stderr.write(
      `pcsync watch: SIGHUP received: ${loop.running ? "another cycle starts as soon as this one ends" : "starting a cycle now"}, reading the manifest again\n`,
    );
    loop.trigger();
  };
  const stopHandlers: [NodeJS.Signals, () => void][] = [
    ["SIGTERM", () => onStop("SIGTERM")],
    ["SIGINT", () => onStop("SIGINT")],
  ];
  for (const [name, handler] of stopHandlers) process.on(name, handler);
  process.on("SIGHUP", onHangUp);
  // Asked once this run listens, so that no SIGHUP falls between the binary's hold and this.
  if (earlyHangUp?.() === true)
    io.stderr.write("pcsync watch: SIGHUP received while starting: the first cycle reads the manifest\n");
  return {
    received: () => received,
    stopListening: () => {
      stopping = true;
      for (const [name, handler] of stopHandlers) process.off(name, handler);
    },
    /** Everything has drained: the binary's hold keeps a SIGHUP harmless until the process exits. */
    dispose: () => {
      process.off("SIGHUP", onHangUp);
    },
  };
}

// A full collection after each cycle: a cycle's read state is promoted to the old generation before it
// dies, and V8 shrinks an idle heap only after seconds without work, so without it the resident memory
// of a watcher climbs for hundreds of cycles without any leak.
let collect: (() => void) | undefined;

function compactHeap(): void {
  // The flag only adds `gc` to contexts made after it is set, so it is exposed to a context of its own.
  if (collect === undefined) setFlagsFromString("--expose-gc");
  collect ??= (globalThis as { gc?: () => void }).gc ?? (runInNewContext("gc") as () => void);
  collect();
}
