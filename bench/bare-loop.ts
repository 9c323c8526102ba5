// The floor the harness allows: requests made by a bare undici loop at a given concurrency (no
// validation, no limiter, no planning), beside which a client's ratio reads.

import { Agent, request } from "undici";
import { BENCH_API_KEY } from "./dataset.js";

/** Wall time of GETting every path (under `baseUrl`), `concurrency` at once, each body parsed. */
export async function bareRequestsMs(
  baseUrl: string,
  paths: readonly string[],
  concurrency: number,
): Promise<number> {
  const agent = new Agent({ connections: concurrency });
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      const path = paths[next++] as string;
      const response = await request(`${baseUrl}${path}`, {
        dispatcher: agent,
        headers: { authorization: `Bearer ${BENCH_API_KEY}` },
      });
      JSON.parse(await response.body.text());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - started;
  await agent.close();
  return elapsed;
}
