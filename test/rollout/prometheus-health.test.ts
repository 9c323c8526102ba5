// The Prometheus gate's rules apart from any server: the placeholders, what an answer of
// /api/v1/query gives, the verdict on a value, and a project judged on two signals.

import { describe, expect, it } from "vitest";
import { isInputError } from "../../src/input-error.js";
import { SecretRegistry } from "../../src/redact.js";
import {
  fillQuery,
  judgeValue,
  prometheusAuthorization,
  readAnswer,
} from "../../src/rollout/prometheus-health.js";
import { combineVerdicts } from "../../src/rollout/rollout-gate.js";

const SPEC = { url: "http://prometheus:9090", query: "q", max: 2, allowUnknown: false };
const AT = "http://prometheus:9090";

function answer(body: unknown, status = 200) {
  return readAnswer(status, Buffer.from(JSON.stringify(body)), AT);
}

const vector = (...values: string[]) => ({
  status: "success",
  data: { resultType: "vector", result: values.map((value) => ({ metric: {}, value: [1, value] })) },
});

describe("the Prometheus gate", () => {
  it("fills {{project}} as a PromQL string's inside and {{window}} as a duration", () => {
    expect(fillQuery('sum(x{p="{{project}}"}[{{ window }}])', 'a"b\\', "95s")).toBe(
      'sum(x{p="a\\"b\\\\"}[95s])',
    );
  });

  it("reads one series or a scalar; no series, several, NaN or an error are no value", () => {
    expect(answer(vector("1.5"))).toEqual({ value: 1.5 });
    expect(answer(vector("+Inf"))).toEqual({ value: Number.POSITIVE_INFINITY });
    expect(answer({ status: "success", data: { resultType: "scalar", result: [1, "3"] } })).toEqual({
      value: 3,
    });
    expect(answer(vector())).toEqual({ none: "the query gives no series for this project" });
    expect(answer(vector("1", "2"))).toMatchObject({ none: expect.stringContaining("2 series") });
    expect(answer(vector("NaN"))).toEqual({ none: "the query's value is NaN" });
    expect(answer({ status: "error", errorType: "bad_data", error: "parse error" }, 400)).toEqual({
      none: `Prometheus at ${AT} refused the query (400): parse error`,
    });
    expect(readAnswer(200, Buffer.from("<html>"), AT)).toMatchObject({
      none: expect.stringContaining("no JSON"),
    });
  });

  it("fails a value over max, passes one at it, and fails no value unless allow_unknown", () => {
    expect(judgeValue("1", { value: 3 }, SPEC, AT)).toMatchObject({ status: "fail", passed: false });
    expect(judgeValue("1", { value: 2 }, SPEC, AT)).toMatchObject({ status: "pass", passed: true });
    expect(judgeValue("1", { none: "x" }, SPEC, AT)).toMatchObject({ status: "unknown", passed: false });
    expect(judgeValue("1", { none: "x" }, { ...SPEC, allowUnknown: true }, AT)).toMatchObject({
      status: "unknown",
      passed: true,
    });
    // A journal is JSON: an infinite value is in the summary, not the figures.
    expect(judgeValue("1", { value: Number.POSITIVE_INFINITY }, SPEC, AT).figures).toEqual({ max: 2 });
  });

  it("passes a project judged on two signals only when it passes each", () => {
    const pass = {
      project: "1",
      status: "pass",
      passed: true,
      figures: { value: 0 },
      summary: "ok",
    } as const;
    const fail = { ...pass, status: "fail", passed: false, summary: "bad" } as const;
    const both = combineVerdicts("1", [
      { signal: "logs", verdict: pass },
      { signal: "prometheus", verdict: fail },
    ]);
    expect(both).toMatchObject({ status: "fail", passed: false, summary: "logs: ok; prometheus: bad" });
    expect(both.figures).toEqual({ logs_value: 0, prometheus_value: 0 });
    expect(
      combineVerdicts("1", [
        { signal: "logs", verdict: pass },
        { signal: "prometheus", verdict: pass },
      ]),
    ).toMatchObject({ status: "pass", passed: true });
  });

  describe("credentials", () => {
    const basic = { kind: "basic" as const, username: "pcsync", passwordEnv: "PROM_PASSWORD" };
    const bearer = { kind: "bearer" as const, tokenEnv: "PROM_TOKEN" };
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return isInputError(error) ? { code: error.code, message: error.message } : error;
      }
      return undefined;
    };

    it("makes the header from the variable, and registers every form of the secret", () => {
      const secrets = new SecretRegistry();
      const header = prometheusAuthorization(
        { ...SPEC, url: "https://prometheus:9090", auth: basic },
        { PROM_PASSWORD: "correct horse battery" },
        secrets,
        false,
      );
      expect(header).toBe(`Basic ${Buffer.from("pcsync:correct horse battery").toString("base64")}`);
      expect(secrets.redact(`sent ${header} (correct horse battery)`).text).not.toMatch(/horse|cGNzeW5j/);
      const token = prometheusAuthorization(
        { ...SPEC, url: "https://prometheus:9090", auth: bearer },
        { PROM_TOKEN: "tok-123456789" },
        secrets,
        false,
      );
      expect(token).toBe("Bearer tok-123456789");
      expect(secrets.redact("tok-123456789").text).not.toContain("tok-123456789");
      expect(prometheusAuthorization(SPEC, {}, secrets, false)).toBeUndefined();
    });

    it.each([
      { env: {}, code: "prometheus_credentials_missing", says: "PROM_PASSWORD, which is not set" },
      { env: { PROM_PASSWORD: "" }, code: "prometheus_credentials_missing", says: "(or is empty)" },
      {
        env: { PROM_PASSWORD: "s3cret-password\n" },
        code: "prometheus_credentials_invalid",
        says: "holds a line break or another control character",
      },
    ])("refuses a password variable $code: $says", ({ env, code, says }) => {
      const spec = { ...SPEC, url: "https://prometheus:9090", auth: basic };
      expect(refusal(() => prometheusAuthorization(spec, env, new SecretRegistry(), false))).toEqual({
        code,
        message: expect.stringContaining(says),
      });
    });

    it("refuses credentials over plain http to another host, unless --insecure-http; loopback is fine", () => {
      const env = { PROM_TOKEN: "tok-123456789" };
      const remote = { ...SPEC, url: "http://prometheus:9090", auth: bearer };
      expect(refusal(() => prometheusAuthorization(remote, env, new SecretRegistry(), false))).toEqual({
        code: "prometheus_insecure_http",
        message: expect.stringContaining("plain http to prometheus:9090"),
      });
      expect(prometheusAuthorization(remote, env, new SecretRegistry(), true)).toBe("Bearer tok-123456789");
      for (const url of ["http://127.0.0.1:9090", "http://localhost:9090", "http://[::1]:9090"])
        expect(prometheusAuthorization({ ...remote, url }, env, new SecretRegistry(), false)).toBeDefined();
      // Without credentials, plain http is the user's to choose: nothing secret goes over it.
      expect(prometheusAuthorization(SPEC, env, new SecretRegistry(), false)).toBeUndefined();
    });

    it("says whether a 401 or 403 refused the credentials sent or asks for some", () => {
      expect(readAnswer(401, Buffer.from("Unauthorized\n"), AT, true)).toEqual({
        none: expect.stringContaining(`Prometheus at ${AT} refused pcsync's credentials (401)`),
      });
      expect(readAnswer(403, Buffer.from("Forbidden"), AT)).toEqual({
        none: expect.stringContaining(`Prometheus at ${AT} asks for credentials (403)`),
      });
    });
  });
});
