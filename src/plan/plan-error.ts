// A plan that cannot be made or used: the manifest and the server's state contradict each other
// (a config pinned to a missing id, a project named twice), or a saved plan file is not a plan.

import { type FactsOf, type MessageTable, messageOf, PcsyncError } from "../errors.js";

const PLAN_MESSAGES = {
  plan_invalid: ({ problems }: { problems: readonly string[] }) =>
    `the plan cannot be made:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
  /** Not JSON, not a plan, another version, or invalid (`problem` follows the file's name). */
  plan_file_invalid: ({ file, problem }: { file: string; problem: string }) => `${file} ${problem}`,
  plan_file_unreadable: ({ file, reason }: { file: string; reason: string }) =>
    `cannot read the plan file ${file}: ${reason}`,
  /** A project's list answered 404: `where` is its place in the manifest, `failure` the 404's own line. */
  project_not_found: (f: { project: string; where: string | undefined; server: string; failure: string }) =>
    `project ${f.project}${f.where === undefined ? "" : ` (${f.where})`}: the server at ${f.server} does not know it, or it is not visible to this API key (${f.failure}). Check the project id, or use a key with access to project ${f.project}.`,
} satisfies MessageTable;

export type PlanErrorCode = keyof typeof PLAN_MESSAGES;

export class PlanError<Code extends PlanErrorCode = PlanErrorCode> extends PcsyncError {
  declare readonly code: Code;

  constructor(code: Code, facts: FactsOf<typeof PLAN_MESSAGES, Code>) {
    super(code, messageOf(PLAN_MESSAGES, code, facts));
  }
}
