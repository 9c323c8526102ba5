// `${VAR}`, `${VAR:-default}` and the `$${` escape on single strings.

import { describe, expect, it } from "vitest";
import { interpolateText } from "../../src/manifest/interpolate.js";

describe("interpolateText", () => {
  const env = { A: "alpha", EMPTY: "", N: "7" };

  it.each([
    ["plain text", "plain text"],
    ["${A}", "alpha"],
    ["x-${A}-${N}", "x-alpha-7"],
    ["${MISSING:-fallback}", "fallback"],
    ["${EMPTY:-fallback}", "fallback"],
    ["${EMPTY}", ""],
    ["${A:-unused}", "alpha"],
    ["${MISSING:-}", ""],
    ["${MISSING:-a b: c}", "a b: c"],
    ["$${A}", "${A}"],
    // Only `$${` is an escape, read left to right: a `$` before it stays.
    ["$$${A}", "$${A}"],
    ["$A and $ alone", "$A and $ alone"],
  ])("%s -> %s", (input, expected) => {
    const result = interpolateText(input, env);
    expect(result.problems).toEqual([]);
    expect(result.value).toBe(expected);
  });

  it("reports an unset variable, naming the fix", () => {
    expect(interpolateText("x${NOPE}y", env).problems).toEqual([
      {
        token: "${NOPE}",
        message: "environment variable NOPE is not set; set it, or give a default: ${NOPE:-value}",
      },
    ]);
  });

  it.each([
    ["${}", /invalid reference "\$\{\}"/],
    ["${A B}", /invalid reference/],
    ["${A:x}", /for a default write \$\{A:-value\}/],
    ["${A:-${B}}", /nested `\$\{`/],
    ["${A", /unclosed `\$\{`/],
  ])("reports the malformed %s", (input, message) => {
    const [problem] = interpolateText(input, env).problems;
    expect(problem?.message).toMatch(message);
  });

  it("does not interpolate what a variable contains", () => {
    expect(interpolateText("${A}", { A: "${B}", B: "no" }).value).toBe("${B}");
  });
});
