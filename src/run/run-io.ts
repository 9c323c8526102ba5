// What a use case may touch of the outside world: the streams it reports on, the environment, the
// working directory and the run's secrets. The CLI's io (src/cli/cli-io.ts) is one.

import type { Writable } from "node:stream";
import type { SecretRegistry } from "../redact.js";

export interface RunIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * The secrets of this run (the API key, webhook secrets): every writer redacts them, and
   * documents written exactly are refused if they hold one. One registry per run, passed in.
   */
  secrets: SecretRegistry;
}
