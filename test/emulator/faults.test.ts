// Fault injection: random 503/429 (reproducible with a seed), dropped writes that still commit,
// per-key rate limits with the right headers and wait per profile, and latency.

import { describe, expect, it } from "vitest";
import { SlidingWindowLimiter } from "../../src/emulator/faults.js";
import { ALL_ACCESS, READ_ONLY, startTestEmulator } from "../support/emulator.js";
import { errorBody, obj } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs";

async function statuses(
  client: Awaited<ReturnType<typeof startTestEmulator>>,
  count: number,
): Promise<number[]> {
  const result: number[] = [];
  for (let index = 0; index < count; index += 1) result.push((await client.get(CONFIGS)).status);
  return result;
}

describe("random failures", () => {
  it("answers 503 before processing, with an error body", async () => {
    const client = await startTestEmulator({ faults: { fail503Rate: 1 } });
    const reply = await client.post(CONFIGS, { plugin: 1, order: 1 });
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual(
      errorBody("server_error", "service_unavailable", "Service temporarily unavailable, try again later."),
    );
    expect(client.emulator.snapshot().records).toHaveLength(5);
    // Before processing means before authentication too.
    expect((await client.get(CONFIGS, { key: null })).status).toBe(503);
  });

  it("fails about the given fraction, the same requests for the same seed", async () => {
    const first = await startTestEmulator({ faults: { fail503Rate: 0.3, seed: 42 } });
    const second = await startTestEmulator({ faults: { fail503Rate: 0.3, seed: 42 } });
    const a = await statuses(first, 60);
    const b = await statuses(second, 60);
    expect(a).toEqual(b);
    const failures = a.filter((status) => status === 503).length;
    expect(failures).toBeGreaterThan(5);
    expect(failures).toBeLessThan(35);
    expect(new Set(a)).toEqual(new Set([200, 503]));
  });

  it("answers 429 with Retry-After in the seed profile", async () => {
    const client = await startTestEmulator({ faults: { fail429Rate: 1 } });
    const reply = await client.get(CONFIGS);
    expect(reply.status).toBe(429);
    expect(reply.headers.get("retry-after")).toBe("1");
    expect(reply.body).toEqual(
      errorBody("throttled_error", "throttled", "Request was throttled. Expected available in 1 second."),
    );
  });

  it("announces the configured wait on injected 429s, so fast tests need not sleep", async () => {
    const client = await startTestEmulator({ faults: { fail429Rate: 1, fail429WaitSeconds: 0 } });
    const reply = await client.get(CONFIGS);
    expect(reply.headers.get("retry-after")).toBe("0");
    expect(obj(reply.body).detail).toBe("Request was throttled. Expected available in 0 seconds.");
    expect(() => client.emulator.setFaults({ fail429WaitSeconds: -1 })).toThrow(RangeError);
  });

  it("answers 429 without Retry-After in the posthog-2024 profile", async () => {
    const client = await startTestEmulator({ profile: "posthog-2024", faults: { fail429Rate: 1 } });
    const reply = await client.get(CONFIGS);
    expect(reply.status).toBe(429);
    expect(reply.headers.get("retry-after")).toBeNull();
    expect(obj(reply.body).detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
  });

  it("can be changed at runtime", async () => {
    const client = await startTestEmulator();
    client.emulator.setFaults({ fail503Rate: 1 });
    expect((await client.get(CONFIGS)).status).toBe(503);
    client.emulator.setFaults({});
    expect((await client.get(CONFIGS)).status).toBe(200);
  });

  it("rejects rates outside 0..1", async () => {
    const client = await startTestEmulator();
    expect(() => client.emulator.setFaults({ fail503Rate: 2 })).toThrow(RangeError);
  });
});

describe("dropped writes", () => {
  it("commits the change, then closes the connection without answering", async () => {
    const client = await startTestEmulator({ faults: { dropWriteRate: 1 } });
    await expect(client.post(CONFIGS, { plugin: 8, order: 4, name: "dropped" })).rejects.toThrow();
    expect(client.emulator.snapshot().records.find((record) => record.name === "dropped")).toMatchObject({
      id: 6,
    });
    await expect(client.patch(`${CONFIGS}/1`, { name: "patched" })).rejects.toThrow();
    expect(client.emulator.snapshot().records.find((record) => record.id === 1)?.name).toBe("patched");
    // Reads are never dropped.
    expect((await client.get(`${CONFIGS}/6`)).status).toBe(200);
    expect(client.emulator.requestLog.map((entry) => [entry.method, entry.status])).toEqual([
      ["POST", 0],
      ["PATCH", 0],
      ["GET", 200],
    ]);
  });
});

describe("late writes", () => {
  it("hold a write past its client's timeout, then commit it all the same; reads are never held", async () => {
    const client = await startTestEmulator({ faults: { lateWriteRate: 1, lateWriteMs: 300 } });
    const { url } = client.emulator;
    const started = Date.now();
    expect((await client.get(CONFIGS)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(300);
    await expect(
      fetch(`${url}${CONFIGS}/`, {
        method: "POST",
        headers: { authorization: `Bearer ${ALL_ACCESS}`, "content-type": "application/json" },
        body: JSON.stringify({ plugin: 8, order: 4, name: "late" }),
        signal: AbortSignal.timeout(50),
      }),
    ).rejects.toThrow();
    // The client gave up; the write has not landed yet, and does once it has been held.
    expect(client.emulator.snapshot().records.find((record) => record.name === "late")).toBeUndefined();
    await client.emulator.idle();
    expect(client.emulator.snapshot().records.find((record) => record.name === "late")).toMatchObject({
      id: 6,
    });
  });
});

describe("the kinds of failed write a client must tell apart", () => {
  it("503 with Retry-After: refused before processing, saying when to come back", async () => {
    const client = await startTestEmulator({ faults: { fail503Rate: 1, fail503RetryAfterSeconds: 7 } });
    const reply = await client.post(CONFIGS, { plugin: 8, order: 4, name: "refused" });
    expect(reply.status).toBe(503);
    expect(reply.headers.get("retry-after")).toBe("7");
    expect(obj(reply.body).code).toBe("service_unavailable");
    expect(client.emulator.snapshot().records.find((record) => record.name === "refused")).toBeUndefined();
  });

  it("500 after commit: the write is stored, and answered with the service's error body", async () => {
    const client = await startTestEmulator({ faults: { commitThen500Rate: 1 } });
    const reply = await client.post(CONFIGS, { plugin: 8, order: 4, name: "stored" });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual(errorBody("server_error", "error", "A server error occurred."));
    expect(client.emulator.snapshot().records.find((record) => record.name === "stored")).toMatchObject({
      id: 6,
    });
    // Reads are answered as usual.
    expect((await client.get(`${CONFIGS}/6`)).status).toBe(200);
  });

  it("a proxy's 502 or 504: an HTML page, and the service never saw the request", async () => {
    const client = await startTestEmulator({ faults: { proxyErrorRate: 1, seed: 3 } });
    const seen = new Set<number>();
    for (let index = 0; index < 12; index += 1) {
      const reply = await client.post(CONFIGS, { plugin: 8, order: 4, name: `proxied ${index}` });
      seen.add(reply.status);
      expect(reply.headers.get("content-type")).toBe("text/html");
      expect(reply.text).toMatch(/<html>.*(502 Bad Gateway|504 Gateway Time-out)/);
    }
    expect(seen).toEqual(new Set([502, 504]));
    expect(client.emulator.snapshot().records).toHaveLength(5);
  });

  it("rejects rates outside 0..1 and a negative Retry-After", async () => {
    const client = await startTestEmulator();
    expect(() => client.emulator.setFaults({ commitThen500Rate: 2 })).toThrow(RangeError);
    expect(() => client.emulator.setFaults({ proxyErrorRate: -0.1 })).toThrow(RangeError);
    expect(() => client.emulator.setFaults({ fail503RetryAfterSeconds: -1 })).toThrow(RangeError);
  });
});

describe("rate limits", () => {
  it("throttles a key past its per-minute limit, with Retry-After and the wait in the body (seed)", async () => {
    const client = await startTestEmulator({ faults: { rateLimit: { perMinute: 3 } } });
    expect(await statuses(client, 3)).toEqual([200, 200, 200]);
    const reply = await client.get(CONFIGS);
    expect(reply.status).toBe(429);
    const wait = Number(reply.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(59);
    expect(wait).toBeLessThanOrEqual(60);
    expect(reply.body).toEqual(
      errorBody(
        "throttled_error",
        "throttled",
        `Request was throttled. Expected available in ${wait} seconds.`,
      ),
    );
    // Limits are per key.
    expect((await client.get(CONFIGS, { key: READ_ONLY })).status).toBe(200);
  });

  it("sends no Retry-After in the posthog-2024 profile, only the wait in the body", async () => {
    const client = await startTestEmulator({
      profile: "posthog-2024",
      faults: { rateLimit: { perMinute: 1 } },
    });
    expect((await client.get(CONFIGS)).status).toBe(200);
    const reply = await client.get(CONFIGS);
    expect(reply.status).toBe(429);
    expect(reply.headers.get("retry-after")).toBeNull();
    expect(obj(reply.body).detail).toMatch(
      /^Request was throttled\. Expected available in (59|60) seconds\.$/,
    );
  });

  it("computes the wait from the oldest request that still counts", () => {
    const limiter = new SlidingWindowLimiter({ perMinute: 2, perHour: 3 });
    expect(limiter.take("k", 0)).toBeUndefined();
    expect(limiter.take("k", 10_000)).toBeUndefined();
    // Full: the request at 0 frees its slot at 60 s.
    expect(limiter.take("k", 20_000)).toBe(40);
    expect(limiter.take("k", 59_999)).toBe(1);
    expect(limiter.take("k", 60_000)).toBeUndefined();
    // Now the hour is full (0, 10 s, 60 s): the slot of the request at 0 frees at 3600 s.
    expect(limiter.take("k", 130_000)).toBe(3470);
    expect(limiter.take("other", 130_000)).toBeUndefined();
    expect(limiter.take("k", 3_600_000)).toBeUndefined();
  });
});

describe("latency", () => {
  it("delays every response", async () => {
    const client = await startTestEmulator({ faults: { latencyMs: 150 } });
    const started = performance.now();
    expect((await client.get(CONFIGS)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });
});
