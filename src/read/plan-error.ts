// The plan cannot be made: the manifest and the server's state contradict each other (a config
// pinned to a missing id, a record claimed twice, a project named twice).

import { PcsyncError } from "../errors.js";

export class PlanError extends PcsyncError {
  constructor(readonly problems: string[]) {
    super(
      "plan_invalid",
      `the plan cannot be made:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
    );
  }
}
