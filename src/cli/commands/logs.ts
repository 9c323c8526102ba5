// `pcsync logs`: the log entries of a plugin config, filtered, newest first; `--follow` keeps polling
// and prints new entries as they arrive, like `tail -f`.

import { setTimeout as sleep } from "node:timers/promises";
import { Command, Option } from "commander";
import {
  type ApiClient,
  isApiError,
  isRequestError,
  iterateLogs,
  type LogEntry,
  type LogQuery,
} from "../../api/index.js";
import { type FamilyName, getFamily } from "../../families.js";
import { InputError } from "../../input-error.js";
import { type CliIo, useColour } from "../cli-io.js";
import type { CommandRegistrar } from "../command-registrar.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  parsePositiveInt,
  parsePositiveNumber,
} from "../connection.js";
import { listenForStopSignals } from "../early-signals.js";
import {
  actOnConfigRecord,
  addTargetOptions,
  describeRecord,
  readTarget,
  type Target,
  type TargetFlags,
} from "../find-config-record.js";
import { LogFollowCursor } from "../log-follow.js";
import { formatLogEntry, LOG_TYPES, parseLogTypes } from "../log-format.js";
import {
  addDeprecatedAlias,
  collect,
  formatOption,
  TEXT_OR_JSON,
  type TextOrJson,
} from "../shared-options.js";
import { parseTimeFlag } from "../time-flag.js";

interface LogsFlags extends ConnectionFlags, TargetFlags {
  level?: string[];
  search?: string;
  since?: string;
  until?: string;
  limit: string;
  follow?: boolean;
  interval: string;
  format: TextOrJson;
}

interface LogsSettings {
  target: Target;
  query: LogQuery;
  since: Date | undefined;
  limit: number;
  follow: boolean;
  intervalMs: number;
  format: TextOrJson;
}

const DEFAULT_LIMIT = "100";
const DEFAULT_INTERVAL = "2";

/** Checks every flag before any request, so a typo costs no network round trip. */
export function parseLogsFlags(flags: LogsFlags, now: number): LogsSettings {
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
  const types = parseLogTypes(flags.level ?? []);
  const query: LogQuery = {
    ...(types.length > 0 ? { typeFilter: types } : {}),
    ...(flags.search === undefined || flags.search === "" ? {} : { search: flags.search }),
    ...(since ? { after: since } : {}),
    ...(until ? { before: until } : {}),
  };
  const { format } = flags;
  return {
    target,
    query,
    since,
    limit: parsePositiveInt(flags.limit, "--limit"),
    follow: flags.follow === true,
    intervalMs: parsePositiveNumber(flags.interval, "--interval") * 1000,
    format,
  };
}

export const registerLogsCommand: CommandRegistrar = (program, io) => {
  const command = new Command("logs").description(
    "Show the log entries of a plugin config, newest first (with --follow, oldest first as they arrive).",
  );
  addTargetOptions(command);
  command
    .addOption(
      new Option("--level <level>", "only entries of this level, any case (repeatable, or comma-separated)")
        .choices(LOG_TYPES)
        // Keep the choices for help and completion, but accept any case and "warn,error".
        .argParser(collect),
    )
    .addOption(new Option("--search <text>", "only entries whose message contains this text"))
    .addOption(
      new Option("--since <time>", "only entries after this time: ISO-8601, or a duration ago (15m, 2h, 1d)"),
    )
    .addOption(new Option("--until <time>", "only entries before this time: ISO-8601, or a duration ago"))
    .addOption(
      new Option("--limit <n>", "show at most this many entries (the newest)").default(DEFAULT_LIMIT),
    )
    .addOption(new Option("--follow", "keep polling and print new entries as they arrive; stop with Ctrl-C"))
    .addOption(
      new Option("--interval <seconds>", "with --follow: seconds between polls").default(DEFAULT_INTERVAL),
    )
    .addOption(formatOption("text, or json: one JSON object per line", TEXT_OR_JSON));
  // `--type` was the level until `job --type` (a job's name) made one word mean two things.
  addDeprecatedAlias(
    command,
    {
      flags: "--type <level>",
      replacement: "--level",
      attribute: "level",
      merge: (value, previous) => collect(value, previous as string[] | undefined),
    },
    io,
  );
  addConnectionOptions(command, "none");
  command.addHelpText(
    "after",
    `
Examples:
  $ pcsync logs --project 1 --config GeoIP --level warn --level error --since 2h
  $ pcsync logs --project 1 --config 12 --search timeout --format json | jq .message
  $ pcsync logs --project 1 --config GeoIP --follow --interval 5`,
  );
  command.action(async (flags: LogsFlags) => {
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
      const read = (query: LogQuery, max?: number) =>
        readLogs(client, target.project, family, record.id, query, max);
      const print = createPrinter(io, settings.format);
      // One more than asked tells whether older entries were left out.
      const backlog = await read(settings.query, settings.limit + 1);
      const complete = backlog.length <= settings.limit;
      const shown = backlog.slice(0, settings.limit);
      if (!settings.follow) {
        for (const entry of shown) print(entry);
        if (!complete) {
          io.stderr.write(
            `(showing the newest ${settings.limit} entries of ${describeRecord(record)}; use --limit or --since to see others)\n`,
          );
        } else if (shown.length === 0) {
          io.stderr.write(`(no log entries of ${describeRecord(record)} match)\n`);
        }
        return;
      }
      // Following reads like a terminal log: oldest at the top, the newest arriving at the bottom.
      for (const entry of [...shown].reverse()) print(entry);
      const cursor = new LogFollowCursor(shown, { complete, since: settings.since });
      const ahead = cursor.takeWarning();
      if (ahead !== undefined) io.stderr.write(`warning: ${ahead}\n`);
      await pollUntilStopped(io, settings.intervalMs, async () => {
        const after = cursor.nextAfter();
        const polled = await read({ ...settings.query, ...(after ? { after } : {}) });
        for (const entry of cursor.accept(polled)) print(entry);
        const warning = cursor.takeWarning();
        if (warning !== undefined) io.stderr.write(`warning: ${warning}\n`);
      });
    });
  });
  program.addCommand(command);
};

async function readLogs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery,
  max?: number,
): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  const limited = max === undefined ? query : { ...query, limit: Math.min(max, client.pageSize) };
  for await (const entry of iterateLogs(client, projectId, family, configId, limited, max))
    entries.push(entry);
  return entries;
}

// A reader that goes away (`pcsync logs --follow | head`) ends the run at the output edge
// (src/cli/main.ts), so the printer and the poll loop need not watch stdout themselves.
function createPrinter(io: CliIo, format: TextOrJson): (entry: LogEntry) => void {
  const colour = format === "text" && useColour(io.stdout, io.env);
  return (entry) => {
    io.stdout.write(formatLogEntry(entry, format, colour));
  };
}

/**
 * Runs `poll` every `intervalMs` until SIGINT/SIGTERM. A poll in flight finishes first,
 * so nothing is half printed; a second Ctrl-C kills the process as usual.
 */
async function pollUntilStopped(io: CliIo, intervalMs: number, poll: () => Promise<void>): Promise<void> {
  const interrupted = new AbortController();
  // The first SIGINT or SIGTERM stops the loop; both listeners go with it, so that a second signal
  // of either kind ends the process as usual.
  const release = listenForStopSignals(process, () => {
    release();
    interrupted.abort();
  });
  const stop = interrupted.signal;
  try {
    while (!stop.aborted) {
      try {
        await sleep(intervalMs, undefined, { signal: stop });
      } catch {
        break;
      }
      try {
        await poll();
      } catch (error) {
        // The client has already retried; a tail left running should outlast a service hiccup.
        if (!isTransient(error)) throw error;
        io.stderr.write(`warning: ${(error as Error).message}; still following\n`);
      }
    }
  } finally {
    release();
  }
}

function isTransient(error: unknown): boolean {
  if (isRequestError(error, "network_error", "timeout")) return true;
  return isApiError(error) && (error.status === 429 || error.status >= 500);
}
