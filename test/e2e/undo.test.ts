// E2E: every apply keeps a journal; `pcsync rollback` puts the state back, refuses what someone
// changed since, undoes itself in turn, and changes nothing the second time. Both profiles.

import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROFILE_NAMES } from "../../src/emulator/index.js";
import { FE, PC } from "../support/families.js";
import { EXAMPLES } from "../support/paths.js";
import { API_KEY, openServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

let dir: string;
let removeDir: () => Promise<void>;
let journals = 0;
beforeAll(async () => {
  ({ path: dir, remove: removeDir } = await temporaryDirectory());
});
afterAll(() => removeDir());

const newJournal = () => join(dir, `journal-${++journals}.jsonl`);

/** Every listed record of both families of the example projects. */
async function snapshot(server: TestServer): Promise<string> {
  const records: unknown[] = [];
  for (const project of ["1", "2", "3"]) {
    for (const family of [PC, FE]) {
      for (const record of await server.list(project, family)) {
        const { id, name, plugin, enabled, order, description, deleted } = record;
        records.push({ project, family, id, name, plugin, enabled, order, description, deleted });
      }
    }
  }
  return JSON.stringify(records.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
}

describe.concurrent.each(PROFILE_NAMES)("undo on %s", (profile) => {
  it("rollback puts back what apply did; again it changes nothing; rolling back the rollback redoes it", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const before = await snapshot(server);
    const journal = newJournal();
    const applied = await server.run(["apply", "-f", EXAMPLES, "--auto-approve", "--journal", journal]);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain(`undo this apply: pcsync rollback --journal ${journal}`);
    expect((await stat(journal)).mode & 0o777).toBe(0o600);
    const text = await readFile(journal, "utf8");
    expect(text).not.toContain(API_KEY);
    const header = JSON.parse(text.split("\n")[0] ?? "") as Record<string, unknown>;
    expect(header).toMatchObject({
      format: "pcsync-journal",
      command: "apply",
      server: server.env.PCSYNC_BASE_URL,
    });
    expect(header.projects).toEqual(["1", "2", "3"]);
    expect(header.manifests).toEqual(["examples/pcsync.yaml"]);
    const after = await snapshot(server);
    expect(after).not.toBe(before);

    const dry = await server.run(["rollback", "--journal", journal, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toMatch(
      /"Legacy S3"\) in project 1 plugin_configs was deleted by the run; the service still has the row/,
    );
    expect(dry.stdout).toContain("deleted: true → false");
    expect(await snapshot(server)).toBe(after);

    const noTerminal = await server.run(["rollback", "--journal", journal]);
    expect(noTerminal.code).toBe(1);
    expect(noTerminal.stderr).toContain("rollback needs approval");

    // Its own journal goes where an apply's would: under the working directory.
    // The job's step summary speaks of a rollback, not of an apply.
    const summary = join(dir, "step-summary.md");
    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], {
      cwd: dir,
      env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
    });
    expect(undone.stderr).toMatch(
      /undo this rollback: pcsync rollback --journal \.pcsync\/journal\/\S+\.jsonl/,
    );
    expect(undone.code).toBe(0);
    expect(undone.stdout).toMatch(/^Rollback complete: \d+ created, \d+ updated, \d+ deleted/m);
    const summaryText = await readFile(summary, "utf8");
    expect(summaryText).toMatch(/#### What the rollback did\n\n```text\n[^`]*Rollback complete: \d+ created/);
    expect(summaryText).not.toMatch(/Apply complete|What the apply did/);
    expect(await snapshot(server)).toBe(before);
    const planned = await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"]);
    expect(planned.code).toBe(2);

    const again = await server.run(["rollback", "--journal", journal, "--auto-approve"]);
    expect(again.code).toBe(0);
    // Said once, and nothing of a manifest there is none of.
    expect(again.stdout).toBe("Nothing to roll back: every record the run touched is as it was before it.\n");
    const dryAgain = await server.run(["rollback", "--journal", journal, "--dry-run"]);
    expect(dryAgain.stdout).toBe(
      "Nothing to roll back: every record the run touched is as it was before it.\n",
    );
    expect(await snapshot(server)).toBe(before);

    const rollbackJournal = join(dir, /--journal (\S+)/.exec(undone.stderr)?.[1] ?? "");
    const redone = await server.run(["rollback", "--journal", rollbackJournal, "--auto-approve"]);
    expect(redone.code).toBe(0);
    expect(await snapshot(server)).toBe(after);
    expect((await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"])).code).toBe(0);
  });

  it("refuses a record changed since the apply, naming it and the field, unless --force", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const before = await snapshot(server);
    const journal = newJournal();
    expect((await server.run(["apply", "-f", EXAMPLES, "--auto-approve", "--journal", journal])).code).toBe(
      0,
    );
    const filter = (await server.list("1", PC)).find((record) => record.name === "Property Filter");
    expect(
      (
        await server.call("PATCH", `/api/projects/1/plugin_configs/${filter?.id}/`, {
          description: "by hand",
        })
      ).status,
    ).toBe(200);
    const refused = await server.run(["rollback", "--journal", journal, "--auto-approve"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `record ${filter?.id} ("Property Filter") in project 1 plugin_configs: description is "by hand" now`,
    );
    expect(refused.stderr).toContain("Nothing was changed");
    const forced = await server.run(["rollback", "--journal", journal, "--auto-approve", "--force"]);
    expect(forced.code).toBe(0);
    expect(await snapshot(server)).toBe(before);
  });

  it("puts back an empty description as empty when the answers of the run were lost", async ({
    onTestFinished,
  }) => {
    // The run killed after its intents, before any outcome: the journal's before image of GeoIP,
    // read from a list, shows on posthog-2024 the plugin's own description where the record holds none.
    const server = await openServer(onTestFinished, profile);
    const stored = () => server.emulator.snapshot().records.find((record) => record.id === 1)?.description;
    const manifest = join(dir, `geoip-${profile}.yaml`);
    await writeFile(
      manifest,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugin: 1\n          description: by the run\n',
    );
    const before = stored();
    const journal = newJournal();
    expect((await server.run(["apply", "-f", manifest, "--auto-approve", "--journal", journal])).code).toBe(
      0,
    );
    const text = await readFile(journal, "utf8");
    await writeFile(
      journal,
      text
        .split("\n")
        .filter((line) => line.includes('"intent"') || line.includes('"header"'))
        .map((line) => `${line}\n`)
        .join(""),
    );
    // As after a kill, the rollback waits for the writes without an answer (every duration at 1/50).
    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], {
      env: { PCSYNC_TIME_SCALE: "0.02" },
    });
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stderr).toContain("stopped with 1 write begun and not answered");
    expect(stored()).toBe(before);
  });

  it("puts back a description that is the plugin's own text as that text where the server shows empty ones", async ({
    onTestFinished,
  }) => {
    // GeoIP holds its plugin's description as its own. On seed, whose lists show empty
    // descriptions as empty, that is the record's text: it comes back as it was, not emptied (it
    // came back null). posthog-2024 shows no empty text, so there it is taken for the fallback.
    const server = await openServer(onTestFinished, profile);
    const plugins = await server.call("GET", "/api/projects/1/plugin_configs/1/");
    const own = JSON.parse(String((plugins.body as { plugin_info: unknown }).plugin_info ?? "{}")) as {
      description?: string;
    };
    const text = own.description ?? "";
    expect(text).not.toBe("");
    expect(
      (await server.call("PATCH", "/api/projects/1/plugin_configs/1/", { description: text })).status,
    ).toBe(200);
    const manifest = join(dir, `own-text-${profile}.yaml`);
    await writeFile(
      manifest,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugin: 1\n          description: by the run\n',
    );
    const journal = newJournal();
    const applied = await server.run(["apply", "-f", manifest, "--auto-approve", "--journal", journal]);
    expect(applied.code, applied.stderr).toBe(0);
    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"]);
    expect(undone.code, undone.stderr).toBe(0);
    const stored = server.emulator.snapshot().records.find((record) => record.id === 1)?.description;
    expect(stored).toBe(profile === "seed" ? text : null);
  });

  it("says a lost create made nothing when the record of its name is a later, answered create's", async ({
    onTestFinished,
  }) => {
    // As a killed run resumed leaves it: the first POST's answer lost, the resumed POST answered.
    const server = await openServer(onTestFinished, profile);
    const manifest = join(dir, `newbie-${profile}.yaml`);
    await writeFile(
      manifest,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: Newbie\n          plugin: 1\n',
    );
    const journal = newJournal();
    const applied = await server.run(["apply", "-f", manifest, "--auto-approve", "--journal", journal]);
    expect(applied.code, applied.stderr).toBe(0);
    const [header, intent, outcome, end] = (await readFile(journal, "utf8")).trimEnd().split("\n");
    const made = (JSON.parse(outcome ?? "") as { records: { id: number }[] }).records[0]?.id;
    const again = (line: string | undefined) => (line ?? "").replace('"seq":1', '"seq":2');
    await writeFile(journal, [header, intent, again(intent), again(outcome), end, ""].join("\n"));
    const planned = await server.run(["rollback", "--journal", journal, "--dry-run"]);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toContain(
      `note: the create of "Newbie" in project 1 plugin_configs (its answer was lost): it was never made; nothing to undo for it (the record of that name, ${made}, is the write at journal line 3)`,
    );
    expect(planned.stdout).toContain(`- delete "Newbie" (id ${made})`);
  });

  it("resumes from a journal that holds no run (killed before its header) by applying the saved plan", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const plan = join(dir, `unstarted-${profile}.json`);
    expect((await server.run(["plan", "-f", EXAMPLES, "-o", plan])).code).toBe(0);
    const journal = newJournal();
    await writeFile(journal, '{"type":"header","format":"pcsync-jou');
    const resumed = await server.run(["apply", "--plan", plan, "--resume", "--journal", journal]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`note: ${journal} holds no run`);
    const lines = (await readFile(journal, "utf8")).trimEnd().split("\n");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ type: "header", command: "apply" });
    expect(JSON.parse(lines.at(-1) ?? "")).toMatchObject({ type: "end", interrupted: false });
    expect((await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"])).code).toBe(0);
  });

  it("refuses a journal of another server, a journal edited into nonsense; reads one with a torn last line", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const journal = newJournal();
    expect((await server.run(["apply", "-f", EXAMPLES, "--auto-approve", "--journal", journal])).code).toBe(
      0,
    );
    const text = await readFile(journal, "utf8");

    const elsewhere = newJournal();
    await writeFile(elsewhere, text.replace(server.env.PCSYNC_BASE_URL ?? "", "https://evil.example.com"));
    const foreign = await server.run(["rollback", "--journal", elsewhere, "--auto-approve"]);
    expect(foreign.code).toBe(3);
    expect(foreign.stderr).toContain("is of a run against https://evil.example.com");

    const lines = text.split("\n");
    const edited = newJournal();
    await writeFile(
      edited,
      [...lines.slice(0, 3), '{"type":"intent","seq":"x"}', ...lines.slice(3)].join("\n"),
    );
    const bad = await server.run(["rollback", "--journal", edited, "--auto-approve"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${edited}:4: seq is not a positive integer`);

    const torn = newJournal();
    await writeFile(torn, text.slice(0, text.length - 25));
    const tolerant = await server.run(["rollback", "--journal", torn, "--dry-run"]);
    expect(tolerant.code).toBe(0);
    expect(tolerant.stderr).toMatch(/line \d+ was cut off \(the run was killed while writing it\)/);
  });
});
