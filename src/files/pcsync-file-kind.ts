// pcsync's own files told apart by how they start, so that a command handed one of another kind says
// what it was given and which command takes it, instead of calling the file broken or edited.

import { InputError } from "../input-error.js";
import { asRecord } from "../plain-object.js";
import { parseJson } from "./read-json-file.js";

export type PcsyncFileKind = "plan" | "journal" | "rollout_journal";

/** plan-file.ts and journal-format.ts hold them too; a test ties them. */
export const FILE_FORMATS = { plan: "pcsync-plan", journal: "pcsync-journal" } as const;

function objectOf(text: string): Record<string, unknown> | undefined {
  return asRecord(parseJson(text).value);
}

/** A journal by its first line, a plan by the whole document. */
export function pcsyncFileKind(text: string): PcsyncFileKind | undefined {
  const end = text.indexOf("\n");
  const first = objectOf(end < 0 ? text : text.slice(0, end));
  if (first?.type === "header" && first.format === FILE_FORMATS.journal) return "journal";
  if (first?.kind === "rollout") return "rollout_journal";
  return objectOf(text)?.format === FILE_FORMATS.plan ? "plan" : undefined;
}

const NAMES: Record<PcsyncFileKind, string> = {
  plan: "a saved plan",
  journal: "an apply's journal",
  rollout_journal: "a rollout's journal",
};

/** How it ended, and the waves' journals not undone. */
function rolloutState(text: string): { ended: string | undefined; toUndo: string[] } {
  const lines = text.split("\n").map(objectOf);
  // A wave's rollback undoes every journal it wrote through (more than one when it was resumed).
  const undone = new Set(
    lines.flatMap((line) => (line?.kind === "wave_rolled_back" && line.complete === true ? [line.wave] : [])),
  );
  const written = lines.flatMap((line) =>
    line?.kind === "wave_started" && typeof line.journal === "string" && !undone.has(line.wave)
      ? [line.journal]
      : [],
  );
  const ended = lines.findLast((line) => line?.kind === "end")?.result;
  return { ended: typeof ended === "string" ? ended : undefined, toUndo: [...new Set(written)].reverse() };
}

function advice(kind: PcsyncFileKind, file: string, text: string): string {
  switch (kind) {
    case "plan":
      return `apply it with \`pcsync apply --plan ${file}\`; an apply names the journal that undoes it in its last lines`;
    case "journal":
      return `undo that apply with \`pcsync rollback --journal ${file}\`, or finish it with \`pcsync apply --plan PLAN --resume --journal ${file}\` (PLAN: the plan it applied)`;
    case "rollout_journal": {
      const { ended, toUndo } = rolloutState(text);
      const state =
        ended === "complete"
          ? "the rollout is complete"
          : ended === "halted"
            ? "the rollout halted"
            : "the rollout did not end: run the same `pcsync apply -f MANIFEST` again to finish it";
      const undo =
        toUndo.length === 0
          ? "no wave's writes are left to undo"
          : `to undo what it wrote, roll back its waves' journals, newest first: ${toUndo.map((wave) => `\`pcsync rollback --journal ${wave}\``).join(", then ")}`;
      return `each wave keeps a journal of its own, and ${state}; ${undo}`;
    }
  }
}

/** wrong_file_kind (exit 1); quiet when the text is not another kind of pcsync file. */
export function refuseOtherKind(text: string, file: string, wanted: PcsyncFileKind): void {
  const kind = pcsyncFileKind(text);
  if (kind === undefined || kind === wanted) return;
  throw new InputError("wrong_file_kind", {
    file,
    problem: `is ${NAMES[kind]}, not ${NAMES[wanted]}: ${advice(kind, file, text)}`,
  });
}
