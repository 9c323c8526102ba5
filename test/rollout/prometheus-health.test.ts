// The Prometheus gate's rules apart from any server: the placeholders, what an answer of
// /api/v1/query gives, the verdict on a value, and a project judged on two signals.

import { describe, expect, it } from "vitest";
import { fillQuery, judgeValue, readAnswer } from "../../src/rollout/prometheus-health.js";
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
});
