// The logs gate: a project's health is the share of ERROR entries among the entries its changed
// plugin configs logged since the wave's writes, on the service's clock (from each config's write
// as the service stamped it to the newest entry it logged). One bounded read per config (a page of
// what was logged `after` the write, whose envelope's `count` is the total), and a second only when
// the page does not hold every entry (`type_filter=ERROR`, for the count); never a walk through
// every entry of a busy plugin.

import type { ApiClient } from "../api/index.js";
import { listLogs } from "../api/index.js";
import { getFamily } from "../families.js";
import type { LogHealthSpec } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import { plural } from "../plural.js";
import type { LogEntry } from "../wire-types.js";
import type { HealthGate, JudgedConfig, ProjectHealth, WaveToJudge } from "./health-gate.js";

/**
 * The entries a config's first read asks for: beyond them, the ERROR count is a second read. A page
 * of this many entries is a few tens of kB.
 */
const COUNTED_PAGE = 200;

export function createLogHealthGate(client: ApiClient, spec: LogHealthSpec, concurrency: number): HealthGate {
  return {
    signal: "logs",
    async judge(wave: WaveToJudge, abort: AbortSignal): Promise<ProjectHealth[]> {
      return mapConcurrent(wave.projects, concurrency, async ({ project, configs }) => {
        abort.throwIfAborted();
        const withLogs = configs.filter(canLog);
        // A frontend app managed under plugin_configs (which posthog-2024 lists them in too) is
        // read through that family's logs endpoint, an empty page: it would always be "unknown".
        const apps = configs.filter(
          (config) => getFamily(config.family).hasLogs && config.frontendApp,
        ).length;
        // A disabled plugin runs on no event, so it logs nothing: judged by its logs, a change that
        // creates one disabled, or switches one off (turning off a broken plugin across the fleet),
        // would always be "unknown" and roll itself back.
        const readable = withLogs.filter((config) => config.enabled);
        const disabled = withLogs.length - readable.length;
        if (readable.length === 0) {
          return {
            project,
            status: "nothing_to_judge",
            passed: true,
            figures: {},
            summary: `nothing to judge: ${nothingToJudge(disabled, apps)}`,
          } satisfies ProjectHealth;
        }
        let entries = 0;
        let errors = 0;
        for (const config of readable) {
          const counted = await countSince(client, project, config, config.writtenAt ?? wave.since);
          entries += counted.entries;
          errors += counted.errors;
        }
        const verdict = judgeCounts(project, readable.length, { entries, errors }, spec);
        const leftOut: string[] = [];
        if (disabled > 0) leftOut.push(`${disabled} disabled, not judged (logs nothing)`);
        if (apps > 0) leftOut.push(`${plural(apps, "frontend app")}, not judged (no logs)`);
        return { ...verdict, summary: [verdict.summary, ...leftOut].join("; ") };
      });
    },
  };
}

/** Whether a config logs at all: a frontend app runs in the browser, whatever family it is managed in. */
function canLog(config: JudgedConfig): boolean {
  return getFamily(config.family).hasLogs && !config.frontendApp;
}

/**
 * Why a project whose configs none log has nothing to judge: of the plugin configs the wave
 * created or updated, `disabled` are disabled and `apps` are frontend apps (none: it wrote none).
 */
function nothingToJudge(disabled: number, apps: number): string {
  const isAre = (count: number) => (count === 1 ? "is" : "are");
  if (disabled === 0 && apps === 0)
    return "the wave created or updated no plugin config here (frontend apps and deletes have no logs)";
  if (apps === 0)
    return `the plugin config${disabled === 1 ? "" : "s"} the wave created or updated here ${isAre(disabled)} disabled (a disabled plugin logs nothing)`;
  if (disabled === 0)
    return `the plugin config${apps === 1 ? "" : "s"} the wave created or updated here ${apps === 1 ? "is a frontend app" : "are frontend apps"} (frontend apps run in the browser and have no logs)`;
  return `of the plugin configs the wave created or updated here, ${apps} ${isAre(apps)} ${apps === 1 ? "a frontend app" : "frontend apps"} (no logs) and ${disabled} ${isAre(disabled)} disabled (a disabled plugin logs nothing)`;
}

async function countSince(
  client: ApiClient,
  project: string,
  config: JudgedConfig,
  since: Date,
): Promise<{ entries: number; errors: number }> {
  // Both reads count one window, from `since` (the config's write, as the service stamped it) to
  // the newest entry the first read found, both ends on the service's clock: this machine's clock
  // may be minutes off the service's, more than a bake. The first read's window ends at the
  // service's own now (no `before`); the second's (`before` is exclusive) 1 ms after that newest
  // entry, so that an entry logged between the two reads counts neither as an error nor as an
  // entry: else a busy config's ratio would climb with the time between them.
  const all = await listLogs(client, project, config.family, config.id, {
    after: since,
    limit: COUNTED_PAGE,
  });
  // A page that holds every entry logged in the window (a bake's worth, mostly) is counted as it is.
  if (all.results.length >= all.count)
    return { entries: all.count, errors: all.results.filter((entry) => entry.type === "ERROR").length };
  const newest = newestTime(all.results);
  const failed = await listLogs(client, project, config.family, config.id, {
    after: since,
    ...(newest === undefined ? {} : { before: new Date(newest + 1) }),
    limit: 1,
    typeFilter: ["ERROR"],
  });
  // A service that logs late into the window may still count a few more: never a ratio over 1.
  return { entries: Math.max(all.count, failed.count), errors: failed.count };
}

/** The time of the newest of `entries` (ms), on the service's clock; undefined if none says one. */
function newestTime(entries: readonly LogEntry[]): number | undefined {
  let newest: number | undefined;
  for (const entry of entries) {
    const time = Date.parse(entry.timestamp);
    if (!Number.isNaN(time) && (newest === undefined || time > newest)) newest = time;
  }
  return newest;
}

/** The verdict on a project's counts: pure, so that the rule is tested apart from any server. */
export function judgeCounts(
  project: string,
  configCount: number,
  counts: { entries: number; errors: number },
  spec: LogHealthSpec,
): ProjectHealth {
  const { entries, errors } = counts;
  const ratio = entries === 0 ? 0 : errors / entries;
  const figures = { entries, errors, ratio, configs: configCount };
  const shown = `${errors} ERROR of ${entries} entries${entries === 0 ? "" : ` (${percent(ratio)})`} from ${plural(configCount, "plugin config")}`;
  if (entries < spec.minEntries) {
    return {
      project,
      status: "unknown",
      passed: spec.allowUnknown,
      figures,
      summary: `${shown}: fewer than min_entries ${spec.minEntries}, health unknown; ${spec.allowUnknown ? "passes (allow_unknown)" : "fails (set allow_unknown: true to let it pass)"}`,
    };
  }
  const passed = ratio <= spec.maxErrorRatio;
  return {
    project,
    status: passed ? "pass" : "fail",
    passed,
    figures,
    summary: `${shown}: ${passed ? "within" : "over"} max_error_ratio ${percent(spec.maxErrorRatio)}`,
  };
}

function percent(ratio: number): string {
  return `${Number((ratio * 100).toFixed(2))}%`;
}
