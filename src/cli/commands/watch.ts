// `pcsync watch`: reconcile continuously. Its options are checked here; the service is src/watch/.

import { type Command, Option } from "commander";
import { parseDuration } from "../../duration.js";
import { InputError } from "../../input-error.js";
import { DEFAULT_KEPT_HEAL_JOURNALS } from "../../journal/prune-heal-journals.js";
import type { DriftMode } from "../../manifest/types.js";
import { checkMetricsFile } from "../../notify/metrics-file.js";
import { WEBHOOK_FORMATS, type WebhookFormat } from "../../notify/webhook-payload.js";
import { WEBHOOK_DEFAULTS } from "../../notify/webhook-sender.js";
import { baseUrlGiven, manifestServer } from "../../run/connect.js";
import { loadManifest, type ManifestInput, printDiagnostics, runInputs } from "../../run/load-manifest.js";
import { createWebhookSender, type WebhookFlags } from "../../run/webhooks.js";
import { LOG_FORMATS, type LogFormat } from "../../watch/cycle-log.js";
import { parseListen } from "../../watch/listen-address.js";
import { monotonicNow } from "../../watch/monotonic-clock.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import {
  addConnectionOptions,
  addSettleTimeoutOption,
  type ConnectionFlags,
  createClientFromFlags,
  createRuleOf,
  parseSecondsFlag,
} from "../connection.js";
import { takeEarlyHangUp } from "../early-signals.js";
import { addScopeOptions, planSettingsOf, type ScopeFlags, scopeOf } from "../scope-options.js";
import { addManifestOption, collect, parseFlag } from "../shared-options.js";

interface WatchFlags extends ConnectionFlags, ScopeFlags, ManifestInput, WebhookFlags {
  interval: string;
  jitter: string;
  mode: DriftMode;
  listen: string;
  webhookFormat: WebhookFormat;
  webhookTimeout: string;
  once?: boolean;
  metricsFile?: string;
  logFormat: LogFormat;
  manifestSettle: string;
  rolloutSettle: string;
  keepHealJournals: string;
}

/** Shorter intervals would hammer the service; tests and demos use seconds. */
const MIN_INTERVAL_MS = 100;
/** Beyond this, two consecutive waits could differ threefold, and a fleet would bunch up anyway. */
const MAX_JITTER_PERCENT = 50;
/** A change held back longer than this would in practice never be used. */
const MAX_MANIFEST_SETTLE_MS = 3_600_000;
const MAX_ROLLOUT_SETTLE_MS = 24 * 3_600_000;

/** A bare `0` is 0 ms. */
function durationWithin(min: number, max: number): (value: string) => number | undefined {
  return (value) => {
    const ms = value.trim() === "0" ? 0 : parseDuration(value);
    return ms !== undefined && ms >= min && ms <= max ? ms : undefined;
  };
}

export const registerWatchCommand: CommandRegistrar = (io, setExit) => {
  const command = newCommand(
    "watch",
    "Reconcile continuously: plan every interval, expose metrics and health, send webhook events, heal the families in heal mode.",
    `
Heal mode is the approval: like Argo CD's automated sync, a family in heal is applied without a
question, with every safety guard apply has (a guard that refuses writes nothing to that family).

Signals: SIGTERM or SIGINT finish the writes in flight, print a summary and exit 0 (twice: exit at
once). SIGHUP reads the manifest again and starts a cycle now; it never ends the watcher (one while
it starts is answered by the first cycle, one while it stops is ignored).

A changed manifest is used once its content has stayed the same for --manifest-settle (until then
cycles plan with the last settled version): update it by renaming a new file into place. A record
healed in 3 cycles in a row is flapping: heal leaves it alone for a while (heal_flapping event).
Each heal that writes keeps a journal (.pcsync/journal/…-heal.jsonl, for pcsync rollback); the
ended ones beyond the newest --keep-heal-journals are removed.

Examples:
  $ pcsync watch -f pcsync.yaml                                 # warn only; metrics on 127.0.0.1:9464
  $ pcsync watch --mode heal --interval 2m --webhook https://hooks.example.com/pcsync
  $ pcsync watch --shard 2/4 --listen 0.0.0.0:9464              # one watcher of four
  $ pcsync watch --once --metrics-file /var/lib/node_exporter/pcsync.prom   # in cron`,
  )
    .option("--interval <duration>", "time from one cycle's start to the next's (30s, 5m, 1h)", "5m")
    .option("--jitter <percent>", "spread each interval by up to this many percent, either way", "10")
    .addOption(
      new Option("--mode <mode>", "on drift: warn (report only) or heal (apply); a family's `drift:` wins")
        .choices(["warn", "heal"])
        .default("warn"),
    )
    .option(
      "--listen <host:port>",
      "serve /metrics, /healthz and /readyz here (with --once: only when given)",
      "127.0.0.1:9464",
    )
    .option("--webhook <url>", "POST each event to this URL (repeatable)", collect)
    .option("--webhook-secret-file <path>", "sign events with the secret in this file (X-Pcsync-Signature)")
    .addOption(
      new Option("--webhook-format <format>", "json (the event) or slack (a message for an incoming webhook)")
        .choices(WEBHOOK_FORMATS)
        .default("json"),
    )
    .option(
      "--webhook-timeout <seconds>",
      "time allowed for one delivery attempt",
      String(WEBHOOK_DEFAULTS.timeoutMs / 1000),
    )
    .option(
      "--once",
      "run one cycle and exit as plan --detailed-exitcode does: 0 in sync, 2 drift, 1 error, 3 a guard refused a family's heal (the others are healed)",
    )
    .option(
      "--metrics-file <path>",
      "after each cycle, write the metrics here (node_exporter textfile format)",
    )
    .addOption(
      new Option("--log-format <format>", "one line per cycle: text, or json for log shippers")
        .choices(LOG_FORMATS)
        .default("text"),
    )
    .option(
      "--manifest-settle <duration>",
      "use a changed manifest once its content has stayed the same this long (0: as read)",
      "10s",
    )
    .option(
      "--rollout-settle <duration>",
      "with rollout: in the manifest, heal puts a family back only to a version it has seen in sync for the rollout's bake and this long in a row, so that it never heals a wave a rollout rolled back (0: the bake alone)",
      "15m",
    )
    .option(
      "--keep-heal-journals <count>",
      "after each heal, remove the ended heal journals but the newest this many (0: keep all)",
      String(DEFAULT_KEPT_HEAL_JOURNALS),
    );
  addManifestOption(command);
  addScopeOptions(command);
  addConnectionOptions(command, "manifest");
  addSettleTimeoutOption(command);
  return command.action(async (flags: WatchFlags, self: Command) => {
    const intervalMs = parseFlag(
      "--interval",
      flags.interval,
      `a duration of at least ${MIN_INTERVAL_MS}ms, such as 30s, 5m or 1h`,
      durationWithin(MIN_INTERVAL_MS, Number.POSITIVE_INFINITY),
    );
    const jitterShare = parseFlag(
      "--jitter",
      flags.jitter,
      `a percentage from 0 to ${MAX_JITTER_PERCENT}`,
      (value) => {
        const percent = Number(value);
        const valid = value.trim() !== "" && Number.isFinite(percent) && percent >= 0;
        return valid && percent <= MAX_JITTER_PERCENT ? percent / 100 : undefined;
      },
    );
    const manifestSettleMs = parseFlag(
      "--manifest-settle",
      flags.manifestSettle,
      "a duration from 0s to 1h, such as 10s, 30s or 2m",
      durationWithin(0, MAX_MANIFEST_SETTLE_MS),
    );
    const rolloutSettleMs = parseFlag(
      "--rollout-settle",
      flags.rolloutSettle,
      "a duration from 0s to 24h, such as 15m or 1h",
      durationWithin(0, MAX_ROLLOUT_SETTLE_MS),
    );
    const keepHealJournals = parseFlag(
      "--keep-heal-journals",
      flags.keepHealJournals,
      "a whole number ≥ 0 (0: keep all)",
      (value) => (/^\d+$/.test(value) ? Number(value) : undefined),
    );
    // Refused before the first cycle, as plan's -o is; one that fails later (a full disk) warns.
    if (flags.metricsFile !== undefined)
      await checkMetricsFile(flags.metricsFile, {
        cwd: io.cwd,
        inputs: runInputs(flags, { manifests: true }),
      });
    const listen =
      flags.once && self.getOptionValueSource("listen") !== "cli"
        ? undefined
        : parseFlag(
            "--listen",
            flags.listen,
            "HOST:PORT, such as 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464",
            parseListen,
          );
    const webhooks = await createWebhookSender(flags, io, {
      format: flags.webhookFormat,
      timeoutMs: parseSecondsFlag(flags.webhookTimeout, "--webhook-timeout"),
      withoutUrl: "--webhook-secret-file needs a --webhook URL to sign events for",
    });
    // prom-client and the rest of the service load only for a run of watch, not for --help.
    const { runWatch } = await import("../../watch/run-watch.js");
    const code = await runWatch(
      {
        manifest: flags,
        scope: scopeOf(flags),
        planSettings: () => planSettingsOf(flags, io),
        intervalMs,
        jitterShare,
        mode: flags.mode,
        listen,
        once: flags.once === true,
        metricsFile: flags.metricsFile,
        logFormat: flags.logFormat,
        manifestSettleMs,
        rolloutSettleMs,
        keepHealJournals,
        // Checked with the client (createClientFromFlags) first, as the other connection flags are.
        createRule: () => createRuleOf(flags),
      },
      {
        webhooks,
        earlyHangUp: takeEarlyHangUp,
        createClient: async (signal, metrics) => {
          // The base URL may come from the manifest: read it once here, as plan does.
          const fromManifest = !baseUrlGiven(flags, io);
          const loaded = await loadManifest(flags, io).catch((error: unknown) => {
            if (fromManifest) throw error;
            return undefined;
          });
          // Where only the manifest can name the server, one that does not load says why (a typo
          // beside server.base_url), not "no server given".
          if (
            fromManifest &&
            loaded !== undefined &&
            (loaded.errors.length > 0 || loaded.value === undefined)
          ) {
            printDiagnostics(loaded, io);
            throw new InputError("manifest_invalid", { diagnostics: loaded.errors });
          }
          const client = await createClientFromFlags(flags, io, {
            fallback: manifestServer(loaded?.value),
            signal,
            onAttempt: (method, status) => {
              metrics.requests.inc({ method, status: String(status) });
              metrics.progress.lastAttemptAt = monotonicNow();
            },
          });
          return { client, serverFromManifest: fromManifest };
        },
      },
      io,
    );
    setExit(code);
  });
};
