// What a failed POST proves (src/api/attempt-proof.ts), row by row: refused before processing,
// answered by the service, still in flight, answered with something unreadable, or rejected.

import { describe, expect, it } from "vitest";
import {
  type AttemptFailure,
  type AttemptProof,
  attemptFailureOfError,
  proofOf,
} from "../../src/api/attempt-proof.js";
import { ServiceError } from "../../src/api/index.js";
import { isServiceEnvelope } from "../../src/api/validate-response.js";
import { fc } from "../support/fast-check.js";

const status = (code: number, serviceEnvelope: boolean, retryAfter = false): AttemptFailure => ({
  kind: "status",
  status: code,
  serviceEnvelope,
  retryAfter,
});

const TABLE: Array<[string, AttemptFailure, AttemptProof, AttemptProof]> = [
  // what, failure, kind, kind with --treat-5xx-as-in-flight
  ["never sent (connection refused)", { kind: "not_sent" }, "refused", "refused"],
  ["429", status(429, true), "refused", "refused"],
  ["429 without the service's body", status(429, false), "refused", "refused"],
  ["503 with Retry-After", status(503, true, true), "refused", "in_flight"],
  ["503 with Retry-After and a proxy's page", status(503, false, true), "refused", "in_flight"],
  ["500 with the service's body", status(500, true), "answered", "in_flight"],
  ["503 with the service's body", status(503, true), "answered", "in_flight"],
  ["501 with the service's body", status(501, true), "answered", "in_flight"],
  ["500 with a proxy's page", status(500, false), "in_flight", "in_flight"],
  ["503 with a proxy's page", status(503, false), "in_flight", "in_flight"],
  ["502 with the service's body", status(502, true), "in_flight", "in_flight"],
  ["504 with the service's body", status(504, true), "in_flight", "in_flight"],
  ["502 with Retry-After", status(502, false, true), "in_flight", "in_flight"],
  ["504", status(504, false), "in_flight", "in_flight"],
  ["no answer (timeout, reset after sending)", { kind: "no_answer" }, "in_flight", "in_flight"],
  ["an unreadable 2xx or a redirect", { kind: "unreadable_answer" }, "unreadable", "unreadable"],
  ["400", status(400, true), "rejected", "rejected"],
  ["409", status(409, false), "rejected", "rejected"],
];

describe("what a failed POST proves", () => {
  it.each(TABLE)("%s", (_what, failure, kind, strictKind) => {
    expect(proofOf(failure, { fiveXxInFlight: false })).toBe(kind);
    expect(proofOf(failure, { fiveXxInFlight: true })).toBe(strictKind);
  });
});

describe("what a failed POST proves, for any status", () => {
  const anyStatus = fc.record({
    status: fc.integer({ min: 400, max: 599 }),
    serviceEnvelope: fc.boolean(),
    retryAfter: fc.boolean(),
  });

  it("never takes an answer for one the service finished with unless it carries the service's body", () => {
    fc.assert(
      fc.property(anyStatus, fc.boolean(), (facts, fiveXxInFlight) => {
        const kind = proofOf({ kind: "status", ...facts }, { fiveXxInFlight });
        if (kind === "answered") expect(facts.serviceEnvelope && facts.status >= 500).toBe(true);
        // A proxy's gateway errors may hide a request still being processed, whatever they carry.
        if (facts.status === 502 || facts.status === 504) expect(kind).toBe("in_flight");
        // Under --treat-5xx-as-in-flight, every 5xx waits for the window.
        if (fiveXxInFlight && facts.status >= 500) expect(kind).toBe("in_flight");
        // A 4xx other than 429 is the service's "no": never resent, never waited for.
        if (facts.status < 500 && facts.status !== 429) expect(kind).toBe("rejected");
      }),
    );
  });
});

describe("the service's error envelope", () => {
  it.each([
    ['{"type":"server_error","code":"error","detail":"A server error occurred.","attr":null}', true],
    ['{"type":"server_error","code":"error","detail":""}', true],
    ['{"detail":"unavailable"}', false],
    ['{"type":"","code":"error","detail":"x"}', false],
    ['{"type":"server_error","code":5,"detail":"x"}', false],
    ['[{"type":"server_error","code":"error","detail":"x"}]', false],
    ["<html><body>502 Bad Gateway</body></html>", false],
    ["", false],
    ["null", false],
  ])("%s: %s", (body, expected) => {
    expect(isServiceEnvelope(body)).toBe(expected);
    expect(isServiceEnvelope(Buffer.from(body))).toBe(expected);
  });
});

describe("the facts of a client error", () => {
  const request = { method: "POST", path: "/api/projects/1/plugin_configs/" };
  it("reads status, envelope and Retry-After from an api_error", () => {
    const error = new ServiceError("api_error", request, {
      status: 503,
      detail: "x",
      serviceEnvelope: true,
      retryAfterMs: 3_000,
      attempts: 1,
      outcomeUnknown: true,
    });
    expect(attemptFailureOfError(error)).toEqual(status(503, true, true));
  });

  it("tells a connection lost after sending from one never made", () => {
    const base = { origin: "http://x", reason: "ECONNRESET", description: "reset", attempts: 1 };
    expect(
      attemptFailureOfError(new ServiceError("network_error", request, { ...base, outcomeUnknown: true })),
    ).toEqual({
      kind: "no_answer",
    });
    expect(
      attemptFailureOfError(new ServiceError("network_error", request, { ...base, outcomeUnknown: false })),
    ).toEqual({
      kind: "not_sent",
    });
  });

  it("takes a timeout for no answer, and an unreadable 2xx for an unreadable answer", () => {
    expect(
      attemptFailureOfError(
        new ServiceError("timeout", request, {
          phase: "headers",
          timeoutMs: 1,
          attempts: 1,
          outcomeUnknown: true,
        }),
      ),
    ).toEqual({ kind: "no_answer" });
    expect(attemptFailureOfError(new ServiceError("malformed_response", request, { problem: "x" }))).toEqual({
      kind: "unreadable_answer",
    });
    expect(attemptFailureOfError(new Error("bug"))).toBeUndefined();
  });
});
