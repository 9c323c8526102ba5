// Emulators for the emulator's own tests: on port 0, with a key for each kind of access, closed
// after each test.

import { afterEach } from "vitest";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { HttpClient } from "./http-client.js";

export const ALL_ACCESS = "key-all";
export const READ_ONLY = "key-read";
export const WRITE_ONLY = "key-write";
export const LEGACY = "key-legacy";
export const PROJECT_2_ONLY = "key-project-2";
export const NO_SCOPES = "key-none";

export const TEST_KEYS = [
  { key: ALL_ACCESS, scopes: ["*"], projects: "*" },
  { key: READ_ONLY, scopes: ["plugin:read"], projects: "*" },
  { key: WRITE_ONLY, scopes: ["plugin:write"], projects: "*" },
  { key: LEGACY, scopes: null, projects: "*" },
  { key: PROJECT_2_ONLY, scopes: ["*"], projects: [2] },
  { key: NO_SCOPES, scopes: [], projects: "*" },
] satisfies EmulatorOptions["keys"];

const running: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.close()));
});

/** A client of one emulator, with the all-access key unless told otherwise. */
export class EmulatorClient extends HttpClient {
  readonly emulator: RunningEmulator;

  constructor(emulator: RunningEmulator) {
    super(emulator.url, ALL_ACCESS);
    this.emulator = emulator;
  }
}

/** Starts an emulator closed automatically after the test; test keys unless `keys` is given. */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<EmulatorClient> {
  const emulator = await startEmulator({ keys: TEST_KEYS, ...options });
  running.push(emulator);
  return new EmulatorClient(emulator);
}
