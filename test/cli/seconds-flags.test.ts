// Every flag in seconds (--timeout, --list-timeout, --settle-timeout, --webhook-timeout, logs
// --interval) becomes the whole milliseconds one timer holds: a value past about 24 days is a usage
// error that says the bound (a Node timer would fire at once), a fraction of a millisecond rounds up
// to one, and nothing a user types reaches the API client as an internal error.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../src/abortable-sleep.js";
import { parseSecondsFlag } from "../../src/cli/connection.js";
import { runBuiltCli } from "../support/cli.js";
import { REPOSITORY } from "../support/paths.js";

const MANIFEST = join(REPOSITORY, "examples", "pcsync.yaml");

describe("a flag in seconds", () => {
  it.each([
    ["30", 30_000],
    ["2.5", 2_500],
    ["0.0001", 1],
    ["1.0005", 1_001],
    [String(Math.floor(MAX_TIMER_MS / 1000)), Math.floor(MAX_TIMER_MS / 1000) * 1000],
  ])("%s is %i ms", (value, ms) => {
    expect(parseSecondsFlag(value, "--timeout")).toBe(ms);
  });

  it.each(["3000000", "1e10", "1e308", "99999999999999999999999"])(
    "%s is refused, naming the bound",
    (value) => {
      expect(() => parseSecondsFlag(value, "--timeout")).toThrow(
        `--timeout must be at most 2147483 seconds (about 24 days), not "${value}"`,
      );
    },
  );

  it.each(["0", "-1", "NaN", "Infinity", "", "5m"])("%s is refused as not a number > 0", (value) => {
    expect(() => parseSecondsFlag(value, "--timeout")).toThrow(/--timeout must be a number > 0/);
  });

  it.each([
    ["plan", "--timeout"],
    ["plan", "--list-timeout"],
    ["apply", "--settle-timeout"],
    ["watch", "--webhook-timeout"],
  ])("%s %s 1e308 ends with a usage error, not an internal one", async (command, flag) => {
    const result = await runBuiltCli(
      [command, "-f", MANIFEST, ...(command === "apply" ? ["--auto-approve"] : []), flag, "1e308"],
      {
        env: { PCSYNC_BASE_URL: "http://127.0.0.1:1", PCSYNC_API_KEY: "phx_unused_key_0123456789" },
      },
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`${flag} must be at most 2147483 seconds`);
    expect(result.stderr).not.toContain("internal error");
  });
});
