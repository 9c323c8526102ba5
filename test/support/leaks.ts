// Searches what pcsync showed and wrote for a secret, in every form in which it would be recognised.

import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";

/** A text pcsync showed or wrote, with where it came from. */
export interface Shown {
  label: string;
  text: string;
}

/** One line per text and form of `secret` found in it: empty when nothing leaked. */
export function findLeaks(secret: string, shown: readonly Shown[]): string[] {
  const forms = leakForms(secret);
  return shown.flatMap(({ label, text }) =>
    forms.filter((form) => text.includes(form)).map((form) => `${label} contains ${JSON.stringify(form)}`),
  );
}

/**
 * The files in `directory` and below it (a journal under .pcsync/journal/ too), but for the named
 * ones (the inputs a test wrote there itself).
 */
export async function readFilesIn(directory: string, except: readonly string[] = []): Promise<Shown[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)))
    .filter((name) => !except.includes(name))
    .sort();
  return Promise.all(
    names.map(async (name) => ({
      label: `file ${name}`,
      text: await readFile(join(directory, name), "utf8"),
    })),
  );
}

/**
 * Pieces by which a leaked key would be recognised in output: every 12-character slice, its
 * URL-encoded and hex (both cases) forms, and the base64/base64url groups it yields at each byte
 * alignment inside a longer encoded string. Written apart from src/redact.ts, so that a gap there is
 * not copied here.
 */
export function leakForms(key: string): string[] {
  const forms = new Set<string>();
  for (let start = 0; start + 12 <= key.length; start += 1) forms.add(key.slice(start, start + 12));
  const hex = Buffer.from(key).toString("hex");
  forms.add(hex).add(hex.toUpperCase());
  forms.add(encodeURIComponent(key));
  for (let offset = 0; offset < 3; offset += 1) {
    const bytes = Buffer.from(key.slice(offset));
    const wholeGroups = Math.floor(bytes.length / 3) * 4;
    forms.add(bytes.toString("base64").slice(0, wholeGroups));
    forms.add(bytes.toString("base64url").slice(0, wholeGroups));
  }
  return [...forms];
}
