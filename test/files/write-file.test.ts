// The one file writer and its append twin, on a real file system: regular files replaced
// atomically and made 0600 whatever they were, links followed (or refused in a shared directory
// when another user's), devices, FIFOs and descriptors written through and never renamed over,
// sockets and directories refused, and the run's own inputs refused by device and inode. Tests
// run as root in CI containers: root may write anything, so what is refused must be refused by
// pcsync itself, and the root-only cases run there.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendToFile, openForAppend } from "../../src/files/append-file.js";
import { OUTPUT_CODES } from "../../src/files/file-errors.js";
import { writeFileSafely } from "../../src/files/write-file.js";
import { isInputError } from "../../src/input-error.js";

let dir: string;
const isRoot = process.geteuid?.() === 0;
const onLinux = existsSync("/dev/full");

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pcsync-write-file-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
const write = (path: string, text: string, inputs: { path: string; what: string }[] = []) =>
  writeFileSafely(path, text, { cwd: dir, inputs });

/** The code of the output error (an InputError `output_*`) `promise` rejects with, and its message. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isInputError(error, ...OUTPUT_CODES))
    throw new Error(`expected an output error, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe("a regular file", () => {
  it("is created 0600, and replaced atomically as 0600 whatever its mode was", async () => {
    const target = join(dir, "plan.json");
    expect(await write("plan.json", "one")).toMatchObject({ kind: "file" });
    expect(await mode(target)).toBe("600");
    await chmod(target, 0o666);
    const before = await stat(target);
    await write("plan.json", "two");
    expect(await readFile(target, "utf8")).toBe("two");
    expect(await mode(target)).toBe("600");
    // A new inode: a reader holding the old file sees it whole, never half of the new one.
    expect((await stat(target)).ino).not.toBe(before.ino);
    expect(await readdir(dir)).toEqual(["plan.json"]);
  });

  it("takes another mode when told (a metrics file others read), set whatever the umask", async () => {
    await write("metrics.prom", "x");
    await writeFileSafely("metrics.prom", "y", { cwd: dir, mode: 0o644 });
    expect(await mode(join(dir, "metrics.prom"))).toBe("644");
  });

  it("names the path as given when its directory is missing, and leaves nothing behind", async () => {
    expect(await failure(write("missing/plan.json", "x"))).toEqual({
      code: "output_unwritable",
      message:
        "cannot write missing/plan.json: the directory missing does not exist; create it or choose another path",
    });
  });

  it.runIf(isRoot)("replaced by root, stays its owner's", async () => {
    const target = join(dir, "theirs.yaml");
    await writeFile(target, "old");
    await chown(target, 4321, 4321);
    await write("theirs.yaml", "new");
    const info = await stat(target);
    expect([info.uid, info.gid, await mode(target)]).toEqual([4321, 4321, "600"]);
  });
});

describe("a symbolic link", () => {
  it("to a regular file is followed: the target is replaced, the link stays a link", async () => {
    await mkdir(join(dir, "real"));
    await writeFile(join(dir, "real", "plan.json"), "old", { mode: 0o644 });
    await symlink("real/plan.json", join(dir, "link.json"));
    await symlink("link.json", join(dir, "link2.json"));
    await write("link2.json", "new");
    expect((await lstat(join(dir, "link.json"))).isSymbolicLink()).toBe(true);
    expect((await lstat(join(dir, "link2.json"))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, "real", "plan.json"), "utf8")).toBe("new");
    expect(await mode(join(dir, "real", "plan.json"))).toBe("600");
    expect(await readdir(join(dir, "real"))).toEqual(["plan.json"]);
  });

  it("to nothing, or in a loop, is refused and nothing is created", async () => {
    await symlink("nowhere.json", join(dir, "dangling.json"));
    await symlink("b", join(dir, "a"));
    await symlink("a", join(dir, "b"));
    expect(await failure(write("dangling.json", "x"))).toEqual({
      code: "output_refused",
      message: `cannot write dangling.json: it is a symbolic link to ${join(dir, "nowhere.json")}, which does not exist; pcsync does not create files through links: give the target's path, or create it first`,
    });
    expect((await failure(write("a", "x"))).message).toContain("a loop of symbolic links");
    expect((await readdir(dir)).sort()).toEqual(["a", "b", "dangling.json"]);
  });

  it.runIf(isRoot)(
    "of another user in a shared sticky directory is not followed (protected_symlinks' rule)",
    async () => {
      const shared = join(dir, "shared");
      await mkdir(shared);
      await chmod(shared, 0o1777);
      await writeFile(join(dir, "victim"), "precious");
      await symlink(join(dir, "victim"), join(shared, "plan.json"));
      execFileSync("chown", ["-h", "4321:4321", join(shared, "plan.json")]);
      const { code, message } = await failure(write("shared/plan.json", "x"));
      expect(code).toBe("output_refused");
      expect(message).toContain("belongs to another user (uid 4321)");
      expect(await readFile(join(dir, "victim"), "utf8")).toBe("precious");
      // The same link of this user's own is followed.
      execFileSync("chown", ["-h", "0:0", join(shared, "plan.json")]);
      await write("shared/plan.json", "x");
      expect(await readFile(join(dir, "victim"), "utf8")).toBe("x");
    },
  );
});

describe.runIf(onLinux)("what is not a regular file is never renamed over", () => {
  it("/dev/full fails with the device's own error, and stays the device it was", async () => {
    expect(await failure(write("/dev/full", "x"))).toEqual({
      code: "output_unwritable",
      message: "cannot write /dev/full: no space left on the device",
    });
    const info = await stat("/dev/full");
    expect([info.isCharacterDevice(), (info.mode & 0o777).toString(8)]).toEqual([true, "666"]);
  });

  it("/dev/null and a link to it are written through", async () => {
    await symlink("/dev/null", join(dir, "null-link"));
    expect(await write("/dev/null", "x")).toEqual({
      kind: "through",
      path: "/dev/null",
      device: "character device",
    });
    expect(await write("null-link", "x")).toMatchObject({ kind: "through", device: "character device" });
    expect((await lstat(join(dir, "null-link"))).isSymbolicLink()).toBe(true);
    expect((await stat("/dev/null")).isCharacterDevice()).toBe(true);
  });

  it("a descriptor (/dev/stdout, /dev/fd/N) is appended to, not truncated nor replaced", async () => {
    const file = join(dir, "redirected.txt");
    await writeFile(file, "printed before\n");
    const before = await stat(file);
    const handle = await open(file, "a");
    try {
      const written = await write(`/proc/self/fd/${handle.fd}`, "the plan\n");
      expect(written).toMatchObject({ kind: "through", device: "open descriptor" });
    } finally {
      await handle.close();
    }
    expect(await readFile(file, "utf8")).toBe("printed before\nthe plan\n");
    expect((await stat(file)).ino).toBe(before.ino);
  });

  it("a FIFO with a reader gets the text; without one, an error at once, not a wait", async () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const alone = await failure(write("fifo", "x"));
    expect(alone.message).toContain("a FIFO without a reader");
    // A wait would have lasted until a reader came: forever.
    expect(Date.now() - started).toBeLessThan(10_000);
    const reader = await open(fifo, "r+");
    try {
      // r+ holds both ends: the reader exists, and the text waits in the pipe.
      await write("fifo", "through the pipe");
      const buffer = Buffer.alloc(64);
      const { bytesRead } = await reader.read(buffer, 0, 64);
      expect(buffer.subarray(0, bytesRead).toString()).toBe("through the pipe");
    } finally {
      await reader.close();
    }
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });

  it("a socket and a directory are refused", async () => {
    const server = createServer();
    const socket = join(dir, "sock");
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(await failure(write("sock", "x"))).toMatchObject({ code: "output_refused" });
      expect((await failure(write("sock", "x"))).message).toContain("it is a socket");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await failure(write(".", "x"))).toEqual({
      code: "output_refused",
      message: "cannot write .: it is a directory; give a file name",
    });
  });
});

describe("the run's own inputs", () => {
  it("are refused by device and inode: the same name, another spelling, a link, a hard link", async () => {
    await mkdir(join(dir, "m"));
    await writeFile(join(dir, "m", "pcsync.yaml"), "version: 1\n");
    await symlink("m/pcsync.yaml", join(dir, "alias.yaml"));
    await link(join(dir, "m", "pcsync.yaml"), join(dir, "hard.yaml"));
    const inputs = [{ path: "alias.yaml", what: "a manifest (-f)" }];
    for (const output of ["m/pcsync.yaml", "./m/../m/pcsync.yaml", join(dir, "alias.yaml"), "hard.yaml"]) {
      expect(await failure(write(output, "{}", inputs))).toEqual({
        code: "output_is_input",
        message: `cannot write ${output}: it is a manifest (-f) (alias.yaml), which this run reads; the output would replace it: give another path for the output`,
      });
    }
    expect(await readFile(join(dir, "m", "pcsync.yaml"), "utf8")).toBe("version: 1\n");
  });

  it("include the *.yaml a manifest directory would read next time; other files there are fine", async () => {
    await mkdir(join(dir, "m"));
    const inputs = [{ path: "m", what: "a manifest (-f)" }];
    expect((await failure(write("m/new.yml", "{}", inputs))).code).toBe("output_is_input");
    await write("m/plan.json", "{}", inputs);
    expect(await readdir(join(dir, "m"))).toEqual(["plan.json"]);
  });

  it.runIf(onLinux)("are refused behind a descriptor too", async () => {
    await writeFile(join(dir, "vars.yaml"), "A: 1\n");
    const handle = await open(join(dir, "vars.yaml"), "a");
    try {
      const inputs = [{ path: "vars.yaml", what: "a var file (--var-file)" }];
      expect((await failure(write(`/proc/self/fd/${handle.fd}`, "x", inputs))).code).toBe("output_is_input");
    } finally {
      await handle.close();
    }
    expect(await readFile(join(dir, "vars.yaml"), "utf8")).toBe("A: 1\n");
  });
});

describe("appending (a journal, the step summary)", () => {
  it("creates 0600, tightens a looser file, appends, and follows a link to a file", async () => {
    await appendToFile("journal.jsonl", "one\n", { cwd: dir });
    expect(await mode(join(dir, "journal.jsonl"))).toBe("600");
    await chmod(join(dir, "journal.jsonl"), 0o644);
    await symlink("journal.jsonl", join(dir, "latest"));
    await appendToFile("latest", "two\n", { cwd: dir });
    expect(await readFile(join(dir, "journal.jsonl"), "utf8")).toBe("one\ntwo\n");
    expect(await mode(join(dir, "journal.jsonl"))).toBe("600");
  });

  it.runIf(onLinux)("refuses a device, a FIFO and a descriptor, without blocking on the FIFO", async () => {
    execFileSync("mkfifo", [join(dir, "fifo")]);
    for (const path of ["/dev/null", "fifo", "/dev/stdout"]) {
      const { code, message } = await failure(openForAppend(path, { cwd: dir }));
      expect(code, path).toBe("output_refused");
      expect(message).toMatch(/not a file; this output is appended to and kept, so give a file name$/);
    }
  });
});
