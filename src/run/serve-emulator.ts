// The serve use case: the service emulator started as the flags say, told where it listens (and
// the development key it made), and stopped, its data file flushed, once the run is told to stop.

import { DataFileError, type EmulatorOptions, startEmulator } from "../emulator/index.js";
import { describeFileError } from "../files/file-errors.js";
import { InputError } from "../input-error.js";
import type { RunIo } from "./run-io.js";

/** Where `pcsync serve` listens unless told otherwise. */
export const DEFAULT_PORT = 8000;

export interface ServeSettings {
  emulator: EmulatorOptions;
  quiet: boolean;
}

export async function runServe(settings: ServeSettings, io: RunIo, stop: Promise<unknown>): Promise<void> {
  const options: EmulatorOptions = { ...settings.emulator };
  if (!settings.quiet) options.log = (line) => io.stderr.write(`${line}\n`);
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator(options);
  } catch (error) {
    throw describeStartFailure(error, options);
  }
  io.stdout.write(`pcsync serve: listening on ${emulator.url} (profile ${emulator.profile})\n`);
  if (emulator.devKey !== undefined) {
    io.stdout.write(`development API key: ${emulator.devKey}\n`);
    io.stdout.write(`export PCSYNC_BASE_URL=${emulator.url} PCSYNC_API_KEY=${emulator.devKey}\n`);
  }
  await stop;
  await emulator.close();
  io.stderr.write("pcsync serve: stopped\n");
}

function describeStartFailure(error: unknown, options: EmulatorOptions): unknown {
  if (error instanceof DataFileError) {
    return new InputError("emulator_data_invalid", { problem: error.message, advice: error.advice });
  }
  // A system error here comes from the address (--host, --port) or data file (--data): never internal.
  const failure = error as NodeJS.ErrnoException | undefined;
  const code = failure?.code;
  if (typeof code !== "string") return error;
  const address = `${options.host ?? "127.0.0.1"}:${options.port ?? DEFAULT_PORT}`;
  const listening = ["listen", "bind", "getaddrinfo"].includes(failure?.syscall ?? "");
  if (!listening && options.dataFile !== undefined) {
    return new InputError("emulator_data_invalid", {
      problem: `cannot use ${options.dataFile} as the data file: ${describeFileError(failure, options.dataFile)}`,
      advice: "choose another --data file",
    });
  }
  return new InputError("serve_listen_failed", { address, code });
}
