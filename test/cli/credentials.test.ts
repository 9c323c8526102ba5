// Where the key comes from, and that a bad source never shows what it holds.

import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../../src/input-error.js";
import { SecretRegistry } from "../../src/redact.js";
import { resolveApiKey } from "../../src/run/credentials.js";

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "pcsync-credentials-"));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error as Error,
  );
}

describe("resolveApiKey", () => {
  it("takes PCSYNC_API_KEY, trimmed", async () => {
    expect(await resolveApiKey({ env: { PCSYNC_API_KEY: " phx_abc\n" } }, new SecretRegistry())).toBe(
      "phx_abc",
    );
  });

  it("takes the key file, trimmed, over the environment", async () => {
    const file = join(directory, "key");
    await writeFile(file, "phx_from_file\n");
    expect(
      await resolveApiKey({ env: { PCSYNC_API_KEY: "phx_env" }, keyFile: file }, new SecretRegistry()),
    ).toBe("phx_from_file");
  });

  it("reads a relative key file from the command's working directory, naming it as given", async () => {
    await writeFile(join(directory, "relative-key"), "phx_relative\n");
    expect(
      await resolveApiKey({ env: {}, keyFile: "relative-key", cwd: directory }, new SecretRegistry()),
    ).toBe("phx_relative");
    const missing = await rejection(
      resolveApiKey({ env: {}, keyFile: "no-such-key", cwd: directory }, new SecretRegistry()),
    );
    expect(missing.message).toBe(
      "API key file no-such-key: does not exist; check the path given to --api-key-file.",
    );
  });

  it("says how to provide a key when there is none", async () => {
    const error = await rejection(resolveApiKey({ env: {} }, new SecretRegistry()));
    expect(error).toMatchObject({ code: "api_key_missing" });
    expect(error.message).toMatch(/PCSYNC_API_KEY.*--api-key-file/);
  });

  it("names the problem with the file without echoing it", async () => {
    const empty = join(directory, "empty");
    await writeFile(empty, "  \n");
    const spaced = join(directory, "spaced");
    await writeFile(spaced, "phx_secret_part another_secret_part\n");
    const unreadable = join(directory, "unreadable");
    await writeFile(unreadable, "phx_unreadable_secret");
    await chmod(unreadable, 0o000);

    const cases: Array<[string, RegExp, new (...args: never[]) => Error]> = [
      [join(directory, "missing"), /does not exist/, InputError],
      [empty, /is empty/, InputError],
      [directory, /is a directory/, InputError],
      [spaced, /contains spaces/, InputError],
    ];
    // Root reads anything; only check permissions where they apply.
    if (process.getuid?.() !== 0) cases.push([unreadable, /permission denied/, InputError]);
    for (const [file, message, type] of cases) {
      const error = await rejection(
        resolveApiKey({ env: { PCSYNC_API_KEY: "phx_env" }, keyFile: file }, new SecretRegistry()),
      );
      expect(error).toBeInstanceOf(type);
      expect(error.message).toMatch(message);
      expect(error.message).not.toMatch(/secret_part|unreadable_secret/);
    }
  });

  it("refuses an empty PCSYNC_API_KEY", async () => {
    await expect(
      resolveApiKey({ env: { PCSYNC_API_KEY: "  " } }, new SecretRegistry()),
    ).rejects.toMatchObject({
      code: "api_key_invalid",
    });
  });
});
