// `${NAME}`, `${NAME:-default}` and the `$${` escape on single strings: only variables handed to
// pcsync are read, and the API key can never come out, whatever spells it.

import { describe, expect, it } from "vitest";
import { interpolateText } from "../../src/manifest/interpolate.js";
import { resolveVariables, variablesFromEnvironment } from "../../src/manifest/variables.js";
import { SecretRegistry } from "../../src/redact.js";
import { fc } from "../support/fast-check.js";

const KEY = "phx_Interp+Key/0123456789=abcdef";

describe("interpolateText", () => {
  const variables = variablesFromEnvironment({
    PCSYNC_VAR_A: "alpha",
    PCSYNC_VAR_EMPTY: "",
    PCSYNC_VAR_N: "7",
  });

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
    const result = interpolateText(input, variables);
    expect(result.problems).toEqual([]);
    expect(result.value).toBe(expected);
  });

  it("reports an unset variable, naming every way to set it", () => {
    expect(interpolateText("x${NOPE}y", variables).problems).toEqual([
      {
        token: "${NOPE}",
        message:
          "variable NOPE is not set; set PCSYNC_VAR_NOPE in the environment, pass --var NOPE=VALUE or a --var-file, or give a default: ${NOPE:-value}",
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
    const [problem] = interpolateText(input, variables).problems;
    expect(problem?.message).toMatch(message);
  });

  it("does not interpolate what a variable contains", () => {
    const nested = variablesFromEnvironment({ PCSYNC_VAR_A: "${B}", PCSYNC_VAR_B: "no" });
    expect(interpolateText("${A}", nested).value).toBe("${B}");
  });
});

describe("only variables handed to pcsync are read", () => {
  it("ignores plain environment variables, and tells an old manifest the new spelling without the value", () => {
    const variables = variablesFromEnvironment({ GITHUB_TOKEN: "ghs_secret_value_123", HOME: "/root" });
    const result = interpolateText("token ${GITHUB_TOKEN}", variables);
    expect(result.value).not.toContain("ghs_secret_value_123");
    expect(result.problems).toEqual([
      {
        token: "${GITHUB_TOKEN}",
        message:
          "variable GITHUB_TOKEN is not set: pcsync no longer reads the environment variable GITHUB_TOKEN (a manifest could read any secret that way); set PCSYNC_VAR_GITHUB_TOKEN or pass --var GITHUB_TOKEN=VALUE",
      },
    ]);
    // A default still applies: the plain variable is not a value.
    expect(interpolateText("${HOME:-/home/ci}", variables).value).toBe("/home/ci");
  });

  it("reads PCSYNC_VAR_NAME as ${NAME}, and points a prefixed reference at the short name", () => {
    const variables = variablesFromEnvironment({ PCSYNC_VAR_REGION: "eu" });
    expect(interpolateText("${REGION}", variables).value).toBe("eu");
    expect(interpolateText("${PCSYNC_VAR_REGION}", variables).problems[0]?.message).toBe(
      "variable PCSYNC_VAR_REGION is not set; write ${REGION}: the PCSYNC_VAR_ prefix belongs only on the environment variable (PCSYNC_VAR_REGION sets ${REGION})",
    );
  });

  it("takes environment < var files in order < --var, the last --var winning", () => {
    const { variables, errors } = resolveVariables({
      env: { PCSYNC_VAR_A: "env", PCSYNC_VAR_B: "env", PCSYNC_VAR_C: "env", PCSYNC_VAR_D: "env" },
      varFiles: [
        { file: "one.yaml", text: "B: one\nC: one\nD: one\n" },
        { file: "two.yaml", text: "C: two\nD: two\n" },
      ],
      assignments: [
        { name: "D", value: "first" },
        { name: "D", value: "last" },
      ],
    });
    expect(errors).toEqual([]);
    expect(interpolateText("${A} ${B} ${C} ${D}", variables).value).toBe("env one two last");
    expect(variables.values.get("C")?.origin).toBe("two.yaml:1:1");
    expect(variables.values.get("D")?.origin).toBe("--var D");
    expect(variables.values.get("A")?.origin).toBe("PCSYNC_VAR_A");
  });
});

describe("the API key is never interpolated", () => {
  const keyed = (env: NodeJS.ProcessEnv) => variablesFromEnvironment({ PCSYNC_API_KEY: KEY, ...env });

  it.each([
    ["${PCSYNC_API_KEY}", {}],
    ["x-${PCSYNC_API_KEY}-y", {}],
    ["${PCSYNC_API_KEY:-none}", {}],
    ["${PCSYNC_API_KEY}", { PCSYNC_VAR_PCSYNC_API_KEY: KEY }],
    ["${PCSYNC_API_KEY}", { PCSYNC_VAR_PCSYNC_API_KEY: "harmless" }],
  ])("refuses %s at the reference (env %j)", (text, env) => {
    const result = interpolateText(text, keyed(env));
    expect(result.problems).toEqual([
      {
        token: expect.stringMatching(/^\$\{PCSYNC_API_KEY/) as unknown as string,
        message: expect.stringContaining("the API key is never interpolated") as unknown as string,
      },
    ]);
    expect(result.value).not.toContain(KEY);
    expect(result.value).not.toContain("harmless");
  });

  it("refuses ${PCSYNC_API_KEY} even when no key is known", () => {
    const result = interpolateText("${PCSYNC_API_KEY:-x}", variablesFromEnvironment({}));
    expect(result.problems[0]?.message).toMatch(/^\$\{PCSYNC_API_KEY\} is refused/);
  });

  it.each([
    ["the key", KEY],
    ["the key inside a longer value", `Bearer ${KEY} !`],
    ["the key URL-encoded", encodeURIComponent(KEY)],
    ["the key base64-encoded", Buffer.from(`auth:${KEY}`).toString("base64")],
    ["the key hex-encoded, upper case", Buffer.from(KEY).toString("hex").toUpperCase()],
  ])("refuses a variable whose value holds %s, naming the variable and where it was set", (_, value) => {
    const result = interpolateText("desc ${TOKEN}", keyed({ PCSYNC_VAR_TOKEN: value }));
    expect(result.value).toBe("desc ");
    expect(result.problems).toEqual([
      {
        token: "${TOKEN}",
        message:
          "the value of TOKEN (from PCSYNC_VAR_TOKEN) contains the API key; the API key is never interpolated into a manifest (plans, pull-request comments and logs would show it). Give TOKEN another value",
      },
    ]);
    expect(JSON.stringify(result)).not.toContain(value);
  });

  it("refuses parts that spell the key together, and the key written into the text itself", () => {
    const half = KEY.length / 2;
    const split = interpolateText(
      "${A}${B}",
      keyed({ PCSYNC_VAR_A: KEY.slice(0, half), PCSYNC_VAR_B: KEY.slice(half) }),
    );
    expect(split.value).toBe("");
    expect(split.problems[0]?.message).toMatch(/^after interpolation this text contains the API key/);
    const written = interpolateText(`literal ${KEY}`, keyed({}));
    expect(written.value).toBe("");
    expect(written.problems[0]?.message).toMatch(/^this text contains the API key/);
    expect(JSON.stringify([split, written])).not.toContain(KEY);
  });

  it("refuses parts that spell the key also when another reference in the text is refused", () => {
    // A refused or unset reference adds nothing; the rest still joins up around it.
    for (const refused of ["${PCSYNC_API_KEY}", "${UNSET}", "${bad name}"]) {
      const result = interpolateText(
        `\${A}${KEY.slice(9)}${refused}`,
        keyed({ PCSYNC_VAR_A: KEY.slice(0, 9) }),
      );
      expect(result.value).toBe("");
      expect(result.problems.map((problem) => problem.message).join("\n")).toMatch(
        /after interpolation this text contains the API key/,
      );
      expect(JSON.stringify(result)).not.toContain(KEY);
    }
  });

  it("uses the key file's key as well as the environment's", () => {
    const { variables } = resolveVariables({
      env: { PCSYNC_VAR_TOKEN: "phx_from_the_key_file_42" },
      secrets: ["phx_from_the_key_file_42\n"],
    });
    expect(interpolateText("${TOKEN}", variables).problems[0]?.message).toMatch(/contains the API key/);
  });

  it("with a short key, refuses only a value that is the key, not words that contain it", () => {
    // The emulator accepts any key: "ro" must not keep "Property Filter" from being managed.
    const short = (env: NodeJS.ProcessEnv) => variablesFromEnvironment({ PCSYNC_API_KEY: "ro", ...env });
    expect(interpolateText("Property Filter", short({}))).toEqual({
      value: "Property Filter",
      changed: false,
      problems: [],
    });
    expect(interpolateText("${N}", short({ PCSYNC_VAR_N: "Property Filter" })).value).toBe("Property Filter");
    expect(interpolateText("${N}", short({ PCSYNC_VAR_N: "ro" })).problems[0]?.message).toMatch(
      /contains the API key/,
    );
    expect(interpolateText("${PCSYNC_API_KEY}", short({})).problems[0]?.message).toMatch(/is refused/);
  });

  it("refuses a key of 8 characters or more inside a value, as output refuses and redacts it", () => {
    // One length rule (src/redact.ts): a manifest does not accept what a saved plan would refuse.
    const eight = variablesFromEnvironment({ PCSYNC_API_KEY: "k3y-1234" });
    expect(interpolateText("Filter k3y-1234 here", eight).problems[0]?.message).toMatch(
      /contains the API key/,
    );
    const seven = variablesFromEnvironment({ PCSYNC_API_KEY: "k3y-123" });
    expect(interpolateText("Filter k3y-123 here", seven).problems).toEqual([]);
  });

  it("leaves values alone when no key is known", () => {
    expect(interpolateText("${T}", variablesFromEnvironment({ PCSYNC_VAR_T: KEY })).value).toBe(KEY);
  });

  it("lets no text and no variables, however cut and joined, put the key into a value", () => {
    const pieces = [KEY, KEY.slice(0, 9), KEY.slice(9, 21), KEY.slice(21), encodeURIComponent(KEY)];
    const fragment = fc.oneof(
      fc.constantFrom(...pieces, "${A}", "${B}", "${A:-x}", "${PCSYNC_API_KEY}", "$${", "-"),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 8 }),
        fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 3 })), { maxLength: 3 }),
        fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 3 })), { maxLength: 3 }),
        (parts, a, b) => {
          const variables = keyed({ PCSYNC_VAR_A: a.join(""), PCSYNC_VAR_B: b.join("") });
          const result = interpolateText(parts.join(""), variables);
          expect(SecretRegistry.of([KEY]).holds(result.value)).toBe(false);
          expect(SecretRegistry.of([KEY]).holds(JSON.stringify(result.problems))).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });
});
