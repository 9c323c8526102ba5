// Searches what pcsync showed and wrote for a secret, in every form in which it would be recognised.

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { leakForms } from "./in-process.js";

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

/** The files in `directory`, but for the named ones (the inputs a test wrote there itself). */
export async function readFilesIn(directory: string, except: readonly string[] = []): Promise<Shown[]> {
  const names = (await readdir(directory)).filter((name) => !except.includes(name)).sort();
  return Promise.all(
    names.map(async (name) => ({
      label: `file ${name}`,
      text: await readFile(join(directory, name), "utf8"),
    })),
  );
}
