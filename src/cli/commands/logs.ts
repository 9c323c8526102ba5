// `pcsync logs`: the log entries of a plugin config, filtered, newest first; `--follow` keeps polling
// and prints new entries as they arrive, like `tail -f`.

import { Option } from "commander";
import type { LogEntry, LogQuery } from "../../api/index.js";
import { parseDuration } from "../../duration.js";
import { getFamily } from "../../families.js";
import { InputError } from "../../input-error.js";
import { neutraliseInline, neutraliseJson, neutraliseLines } from "../../neutralise-server-text.js";
import { createPaint, type Style } from "../../render/colour.js";
import { followLogs, readLogTail } from "../../run/read-logs.js";
import { useColour } from "../cli-io.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  parsePositiveInt,
  parseSecondsFlag,
} from "../connection.js";
import { untilStopSignal } from "../early-signals.js";
import {
  addOptionAlias,
  collect,
  formatOption,
  parseFlag,
  TEXT_OR_JSON,
  type TextOrJson,
} from "../shared-options.js";
import {
  actOnConfigRecord,
  addTargetOptions,
  describeRecord,
  readTarget,
  type TargetFlags,
} from "../target-options.js";

export const LOG_TYPES = ["DEBUG", "LOG", "INFO", "WARN", "ERROR"] as const;
export type LogType = (typeof LOG_TYPES)[number];

export function parseLogTypes(values: readonly string[]): LogType[] {
  const types = new Set<LogType>();
  for (const value of values.flatMap((item) => item.split(","))) {
    const type = value.trim().toUpperCase();
    if (!(LOG_TYPES as readonly string[]).includes(type)) {
      throw new InputError(
        "usage",
        `--type (or --level) must be one of ${LOG_TYPES.join(", ")} (any case), not "${value.trim()}"`,
      );
    }
    types.add(type as LogType);
  }
  return [...types];
}

const TYPE_STYLES: Readonly<Partial<Record<string, Style>>> = {
  DEBUG: "dim",
  INFO: "cyan",
  WARN: "yellow",
  ERROR: "red",
};
// bounded-spread: the five log types.
const TYPE_WIDTH = Math.max(...LOG_TYPES.map((type) => type.length));
// The longest source the service sends (SYSTEM, PLUGIN, CONSOLE).
const SOURCE_WIDTH = 7;
// Messages come from plugins: made safe as all server text is (neutralise-server-text.ts), so they cannot
// rewrite the terminal nor start a line a CI runner reads as a command.
export function formatLogEntry(entry: LogEntry, format: TextOrJson, colour: boolean): string {
  if (format === "json") return `${neutraliseJson(JSON.stringify(entry))}\n`;
  const type = neutraliseInline(entry.type);
  const shownType = type.padEnd(TYPE_WIDTH);
  const style = TYPE_STYLES[type];
  const coloured = style === undefined ? shownType : createPaint(colour)(style, shownType);
  // Continuation lines are indented so that every printed line starting at column 0 is an entry.
  const message = neutraliseLines(entry.message).join("\n    ");
  const source = neutraliseInline(entry.source).padEnd(SOURCE_WIDTH);
  return `${neutraliseInline(entry.timestamp)} ${coloured} ${source} ${message}\n`;
}

// A date is required so that a bare number ("15") is never taken for a year or an epoch.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A date alone means its midnight UTC; a time without an offset is local time, as `Date.parse` reads it. */
export function parseTimeFlag(value: string, flag: string, now: number): Date {
  const duration = parseDuration(value);
  if (duration !== undefined) return new Date(now - duration);
  const trimmed = value.trim();
  const ms = ISO_TIME.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  const what =
    "an ISO-8601 time (e.g. 2024-06-01T12:00:00Z) or a duration ago (e.g. 30s, 15m, 2h, 1d, 1h30m)";
  return parseFlag(flag, value, what, () => (Number.isNaN(ms) ? undefined : new Date(ms)));
}

interface LogsFlags extends ConnectionFlags, TargetFlags {
  type?: string[];
  search?: string;
  since?: string;
  until?: string;
  limit: string;
  follow?: boolean;
  interval: string;
  format: TextOrJson;
}

/** Checks every flag before any request, so a typo costs no network round trip. */
export function parseLogsFlags(flags: LogsFlags, now: number) {
  const target = readTarget(flags);
  const { family } = target;
  if (family !== undefined && !getFamily(family).hasLogs) {
    throw new InputError(
      "usage",
      `the ${family} family has no logs: logs exist only for plugin_configs (on posthog-2024 servers, frontend apps are listed there too: try --family plugin_configs)`,
    );
  }
  const since = flags.since === undefined ? undefined : parseTimeFlag(flags.since, "--since", now);
  const until = flags.until === undefined ? undefined : parseTimeFlag(flags.until, "--until", now);
  if (since && until && since.getTime() >= until.getTime()) {
    throw new InputError(
      "usage",
      `--since (${since.toISOString()}) must be before --until (${until.toISOString()})`,
    );
  }
  if (flags.follow && until) {
    throw new InputError("usage", "--follow waits for new entries, so it cannot be combined with --until");
  }
  const types = parseLogTypes(flags.type ?? []);
  const query: LogQuery = {
    ...(types.length > 0 ? { typeFilter: types } : {}),
    ...(flags.search === undefined || flags.search === "" ? {} : { search: flags.search }),
    ...(since ? { after: since } : {}),
    ...(until ? { before: until } : {}),
  };
  return {
    target,
    query,
    since,
    limit: parsePositiveInt(flags.limit, "--limit"),
    follow: flags.follow === true,
    intervalMs: parseSecondsFlag(flags.interval, "--interval"),
    format: flags.format,
  };
}

export const registerLogsCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "logs",
    "Show the log entries of a plugin config, newest first (with --follow, oldest first as they arrive).",
    `
Examples:
  $ pcsync logs --project 1 --config GeoIP --type warn --type error --since 2h
  $ pcsync logs --project 1 --config 12 --search timeout --format json | jq .message
  $ pcsync logs --project 1 --config GeoIP --follow --interval 5`,
  );
  addTargetOptions(command);
  command
    .addOption(
      new Option(
        "--type <type>",
        "only entries of this type (level), any case (repeatable, or comma-separated)",
      )
        .choices(LOG_TYPES)
        // Keep the choices for help and completion, but accept any case and "warn,error".
        .argParser(collect),
    )
    .option("--search <text>", "only entries whose message contains this text")
    .option("--since <time>", "only entries after this time: ISO-8601, or a duration ago (15m, 2h, 1d)")
    .option("--until <time>", "only entries before this time: ISO-8601, or a duration ago")
    .option("--limit <n>", "show at most this many entries (the newest)", "100")
    .option("--follow", "keep polling and print new entries as they arrive; stop with Ctrl-C")
    .option("--interval <seconds>", "with --follow: seconds between polls", "2")
    .addOption(formatOption("text, or json: one JSON object per line", TEXT_OR_JSON));
  // `--type` is the contract's name.
  addOptionAlias(
    command,
    {
      flags: "--level <level>",
      description: "the same as --type",
      choices: LOG_TYPES,
      attribute: "type",
      merge: (value, previous) => collect(value, previous as string[] | undefined),
    },
    io,
  );
  addConnectionOptions(command, "none");
  return command.action(async (flags: LogsFlags) => {
    const settings = parseLogsFlags(flags, Date.now());
    const { target } = settings;
    // Both families are searched so that a frontend app named here gets a clear answer.
    const searched = ["plugin_configs", "pipeline_frontend_apps_configs"] as const;
    await actOnConfigRecord(target, searched, { flags, io, action: "logs" }, async (client, found) => {
      const { record, family } = found;
      if (!getFamily(family).hasLogs) {
        throw new InputError(
          "usage",
          `${describeRecord(record)} is a config of ${family}, which has no logs: logs exist only for plugin_configs`,
        );
      }
      const source = { client, project: target.project, family, configId: record.id };
      // A reader that goes away (`pcsync logs --follow | head`) ends the run at the output edge
      // (src/cli/run-binary.ts), so neither printing nor polling need watch stdout themselves.
      const colour = settings.format === "text" && useColour(io.stdout, io.env);
      const print = (entry: LogEntry) => io.stdout.write(formatLogEntry(entry, settings.format, colour));
      const tail = await readLogTail(source, settings.query, settings.limit);
      const { entries, complete } = tail;
      if (!settings.follow) {
        for (const entry of entries) print(entry);
        if (!complete) {
          io.stderr.write(
            `(showing the newest ${settings.limit} entries of ${describeRecord(record)}; use --limit or --since to see others)\n`,
          );
        } else if (entries.length === 0) {
          io.stderr.write(`(no log entries of ${describeRecord(record)} match)\n`);
        }
        return;
      }
      // Following reads like a terminal log: oldest at the top, the newest arriving at the bottom.
      for (const entry of [...entries].reverse()) print(entry);
      await untilStopSignal((stop) =>
        followLogs(
          source,
          settings.query,
          { ...tail, since: settings.since },
          {
            intervalMs: settings.intervalMs,
            stop,
            show: print,
            warn: (line) => io.stderr.write(`warning: ${line}\n`),
          },
        ),
      );
    });
  });
};
