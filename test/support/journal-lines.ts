// A journal's lines as tests write them by hand: the header of an apply of project 1's
// plugin_configs, and the text of a journal of such lines.

export const JOURNAL_HEADER = {
  type: "header",
  format: "pcsync-journal",
  version: 1,
  command: "apply",
  server: "http://127.0.0.1:1",
  startedAt: "2026-01-01T00:00:00Z",
  projects: ["1"],
  families: [{ project: "1", family: "plugin_configs" }],
  plan: { fingerprint: "f", file: null },
  manifests: ["pcsync.yaml"],
};

/** The journal's text: one JSON object a line, each ended by a newline. */
export function journalOf(...lines: unknown[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join("");
}
