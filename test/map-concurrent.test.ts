// mapConcurrent: order kept, at most `limit` in flight, and no new item taken after a failure.

import { describe, expect, it } from "vitest";
import { mapConcurrent } from "../src/map-concurrent.js";

describe("mapConcurrent", () => {
  it("keeps the items' order with at most `limit` in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapConcurrent([5, 1, 4, 2, 3], 2, async (item) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, item * 2));
      inFlight -= 1;
      return item * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it("takes no new item after the first failure, waits for those in flight, and throws that failure", async () => {
    const started: number[] = [];
    let running = 0;
    const error = await mapConcurrent([0, 1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      started.push(item);
      running += 1;
      try {
        await new Promise((resolve) => setTimeout(resolve, item === 1 ? 1 : 20));
        if (item === 1) throw new Error("first");
        if (item === 2) throw new Error("second");
        return item;
      } finally {
        running -= 1;
      }
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe("first");
    // 0, 1 and 2 were in flight when 1 failed; nothing after them started, and nothing still runs.
    expect(started).toEqual([0, 1, 2]);
    expect(running).toBe(0);
  });
});
