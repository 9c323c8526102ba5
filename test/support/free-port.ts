// A TCP port nothing listens on now, on 127.0.0.1: for a process the test starts that takes its
// port on the command line (Prometheus, a README command), or for an address that must not answer.

import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
