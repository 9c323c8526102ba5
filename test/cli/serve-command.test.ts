// `pcsync serve`: flag validation, key specs, what it prints, and a clean stop that flushes the data file.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/cli-io.js";
import { parseKeySpec, parseServeOptions, registerServeCommand } from "../../src/cli/commands/serve.js";
import { InputError } from "../../src/input-error.js";
import { SecretRegistry } from "../../src/redact.js";
import { runServe } from "../../src/run/serve-emulator.js";

class Capture extends Writable {
  text = "";
  private waiters: { pattern: RegExp; resolve: (match: RegExpMatchArray) => void }[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    for (const waiter of [...this.waiters]) {
      const match = this.text.match(waiter.pattern);
      if (match) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
    done();
  }

  waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    const match = this.text.match(pattern);
    if (match) return Promise.resolve(match);
    return new Promise((resolve) => this.waiters.push({ pattern, resolve }));
  }
}

function captureIo(cwd = process.cwd()): CliIo & { stdout: Capture; stderr: Capture } {
  return { stdout: new Capture(), stderr: new Capture(), env: {}, cwd, secrets: new SecretRegistry() };
}

function programWithServe(io: CliIo): Command {
  const program = new Command().exitOverride().configureOutput({
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
  });
  program.addCommand(registerServeCommand(io, () => undefined, program).copyInheritedSettings(program));
  return program;
}

describe("serve flags", () => {
  it("maps every flag onto emulator options", () => {
    const settings = parseServeOptions(
      {
        port: "0",
        host: "0.0.0.0",
        data: "state.json",
        profile: "posthog-2024",
        latency: "25",
        fail503: "0.1",
        fail429: "0",
        dropWrites: "1",
        lateWrites: "0.2",
        lateWriteDelay: "900",
        rateLimit: "480",
        key: ["ci:plugin:read,plugin:write:1,2", "legacy:unscoped"],
        seed: "7",
        quiet: true,
      },
      "/home/someone/project",
    );
    expect(settings).toEqual({
      quiet: true,
      emulator: {
        port: 0,
        host: "0.0.0.0",
        profile: "posthog-2024",
        dataFile: "/home/someone/project/state.json",
        keys: [
          { key: "ci", scopes: ["plugin:read", "plugin:write"], projects: [1, 2] },
          { key: "legacy", scopes: null, projects: "*" },
        ],
        faults: {
          latencyMs: 25,
          fail503Rate: 0.1,
          fail429Rate: 0,
          dropWriteRate: 1,
          lateWriteRate: 0.2,
          lateWriteMs: 900,
          rateLimit: { perMinute: 480 },
          seed: 7,
        },
      },
    });
    expect(parseServeOptions({}, "/").emulator).toEqual({
      port: 8000,
      host: "127.0.0.1",
      profile: "seed",
      faults: {},
    });
  });

  it.each([
    ["480", { perMinute: 480 }],
    ["480/minute", { perMinute: 480 }],
    ["4800/hour", { perHour: 4800 }],
    ["480/min, 4800/h", { perMinute: 480, perHour: 4800 }],
  ])("reads --rate-limit %s", (spec, expected) => {
    expect(parseServeOptions({ rateLimit: spec }, "/").emulator.faults).toEqual({ rateLimit: expected });
  });

  it("reads --log-rate and each --fault-log-errors selector", () => {
    const settings = parseServeOptions(
      {
        logRate: "0.5",
        faultLogErrors: [
          "description:BROKEN",
          "name:canary-*@0.8",
          "plugin:3@1",
          "description:ops@example.com",
          "description:v2@@0",
        ],
      },
      "/",
    );
    expect(settings.emulator.logRate).toBe(0.5);
    expect(settings.emulator.faults?.logErrors).toEqual([
      { description: "BROKEN" },
      { name: "canary-*", ratio: 0.8 },
      { plugin: 3, ratio: 1 },
      // An "@" not followed by a number is part of the text.
      { description: "ops@example.com" },
      { description: "v2@", ratio: 0 },
    ]);
    expect(parseServeOptions({ logRate: "0" }, "/").emulator.logRate).toBe(0);
  });

  it.each([
    ["k", { key: "k", scopes: ["*"], projects: "*" }],
    ["k:*", { key: "k", scopes: ["*"], projects: "*" }],
    ["k:*:3", { key: "k", scopes: ["*"], projects: [3] }],
    ["k:plugin:read", { key: "k", scopes: ["plugin:read"], projects: "*" }],
    ["k:plugin:read:*", { key: "k", scopes: ["plugin:read"], projects: "*" }],
    ["k:unscoped:1,3", { key: "k", scopes: null, projects: [1, 3] }],
  ])("reads --key %s", (spec, expected) => {
    expect(parseKeySpec(spec)).toEqual(expected);
  });

  it.each([
    [{ port: "http" }, /--port must be a port number from 0 to 65535, got "http"/],
    [{ port: "70000" }, /--port/],
    [{ profile: "posthog" }, /--profile must be one of seed, posthog-2024, got "posthog"/],
    [{ fail503: "2" }, /--fail-503 must be a fraction from 0 to 1/],
    [{ fail429: "-0.1" }, /--fail-429 must be a fraction/],
    [{ dropWrites: "lots" }, /--drop-writes must be a fraction/],
    [{ lateWrites: "1.2" }, /--late-writes must be a fraction/],
    [{ lateWriteDelay: "soon" }, /--late-write-delay must be a whole number of milliseconds/],
    [{ latency: "1.5" }, /--latency must be a whole number of milliseconds/],
    // Past the bound, the bound is said: a whole number of milliseconds it is.
    [
      { latency: "3000000000" },
      /--latency must be a whole number of milliseconds up to 600000 \(10 minutes\)/,
    ],
    [{ rateLimit: "0" }, /--rate-limit must be a whole number of requests from 1 to 1000000/],
    [{ rateLimit: "480/fortnight" }, /--rate-limit must be requests per minute, or windows like/],
    [{ rateLimit: "480/minute,500/min" }, /--rate-limit must be requests per minute, or windows like/],
    [{ rateLimit: "4800/hour/2" }, /--rate-limit must be requests per minute, or windows like/],
    [{ seed: "x" }, /--seed must be a whole number/],
    [{ key: [""] }, /--key "": the key must be a non-empty string/],
    [{ key: ["k:1,2"] }, /--key "k:1,2": "1" is not a scope/],
    [{ key: ["k:plugin:delete"] }, /is not a scope/],
    [{ host: " " }, /--host must not be empty/],
    [
      { logRate: "-1" },
      /--log-rate must be log entries per minute per plugin config, from 0 \(none\) to 60000, got "-1"/,
    ],
    [{ logRate: "fast" }, /--log-rate must be log entries per minute/],
    [{ logRate: "60001" }, /--log-rate must be/],
    [
      { faultLogErrors: ["BROKEN"] },
      /--fault-log-errors "BROKEN": a selector is name:GLOB, plugin:ID or description:TEXT/,
    ],
    [{ faultLogErrors: ["owner:x"] }, /--fault-log-errors "owner:x": a selector is/],
    [{ faultLogErrors: ["name:"] }, /--fault-log-errors "name:": name: needs a value after the colon/],
    [{ faultLogErrors: ["plugin:geoip"] }, /plugin: takes a plugin id \(a number\), got "geoip"/],
    [{ faultLogErrors: ["description:BROKEN@1.5"] }, /the ratio "@1.5" must be a number from 0 to 1/],
    [{ faultLogErrors: ["description:BROKEN@0,8"] }, /the ratio "@0,8" must be a number from 0 to 1/],
    [{ data: "" }, /--data must name a file/],
  ])("rejects %o with a usage error", (raw, message) => {
    expect(() => parseServeOptions(raw, "/")).toThrow(InputError);
    expect(() => parseServeOptions(raw, "/")).toThrow(message);
  });

  it("rejects a bad flag through commander before starting anything", async () => {
    const io = captureIo();
    await expect(
      programWithServe(io).parseAsync(["serve", "--port", "abc"], { from: "user" }),
    ).rejects.toThrow(/--port must be/);
    expect(io.stdout.text).toBe("");
  });

  it("documents the flags and an example in --help", async () => {
    const io = captureIo();
    await expect(programWithServe(io).parseAsync(["serve", "--help"], { from: "user" })).rejects.toThrow();
    for (const flag of ["--port", "--host", "--data", "--profile", "--latency", "--fail-503", "--fail-429"]) {
      expect(io.stdout.text).toContain(flag);
    }
    for (const flag of ["--drop-writes", "--rate-limit", "--key", "--seed", "Examples:", "$ pcsync serve"]) {
      expect(io.stdout.text).toContain(flag);
    }
  });
});

describe("runServe", () => {
  it("prints where it listens and the development key, serves, and flushes the data file on stop", async () => {
    const directory = await mkdtemp(join(tmpdir(), "pcsync-serve-"));
    try {
      const io = captureIo(directory);
      let stop: () => void = () => undefined;
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      const settings = parseServeOptions({ port: "0", data: "state.json", quiet: true }, directory);
      const running = runServe(settings, io, stopped);
      const [, url] = await io.stdout.waitFor(
        /^pcsync serve: listening on (http:\/\/127\.0\.0\.1:\d+) \(profile seed\)$/m,
      );
      const [, key] = await io.stdout.waitFor(/^development API key: (phx_dev_\w+)$/m);
      expect(io.stdout.text).toContain(`export PCSYNC_BASE_URL=${url} PCSYNC_API_KEY=${key}\n`);
      const reply = await fetch(`${url}/api/projects/@current/plugin_configs/`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ plugin: 4, order: 9, name: "from serve" }),
      });
      expect(reply.status).toBe(201);
      stop();
      await running;
      const onDisk = JSON.parse(await readFile(join(directory, "state.json"), "utf8")) as {
        records: { name: string }[];
      };
      expect(onDisk.records.map((record) => record.name)).toContain("from serve");
      expect(io.stderr.text).toContain("pcsync serve: stopped");
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("prints no development key when keys are given, and logs requests to stderr unless quiet", async () => {
    const io = captureIo();
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const running = runServe(parseServeOptions({ port: "0", key: ["mine"] }, "/"), io, stopped);
    const [, url] = await io.stdout.waitFor(/listening on (\S+)/);
    await fetch(`${url}/api/projects/`, { headers: { authorization: "Bearer mine" } });
    await io.stderr.waitFor(/^GET \/api\/projects\/ 200 \d+ms$/m);
    stop();
    await running;
    expect(io.stdout.text).not.toContain("development API key");
  });

  it("explains a port already in use", async () => {
    const io = captureIo();
    let stop: () => void = () => undefined;
    const first = runServe(
      parseServeOptions({ port: "0", quiet: true }, "/"),
      io,
      new Promise<void>((resolve) => {
        stop = resolve;
      }),
    );
    const [, port] = await io.stdout.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
    await expect(
      runServe(parseServeOptions({ port: String(port), quiet: true }, "/"), captureIo(), Promise.resolve()),
    ).rejects.toThrow(/the port is in use; pick another with --port/);
    stop();
    await first;
  });
});
