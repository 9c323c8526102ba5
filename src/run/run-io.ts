// What a use case may touch of the outside world: the streams it reports on, the environment, the
// working directory and the run's secrets. The CLI's io (src/cli/cli-io.ts) is one.

import type { Writable } from "node:stream";
import type { SecretRegistry } from "../redact.js";

export interface RunIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Every writer redacts them; documents written exactly are refused if they hold one. */
  secrets: SecretRegistry;
}
