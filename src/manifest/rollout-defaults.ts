// The defaults of `rollout:` (cli-contract.md, "Progressive rollout"): what the manifest reader
// fills in, and what the rollout's gate falls back on; constants only, so the gate loads no reader.

/** The defaults of `rollout:` (cli-contract.md, "Progressive rollout"). */
export const ROLLOUT_DEFAULTS = {
  bakeMs: 600_000,
  maxErrorRatio: 0.05,
  minEntries: 20,
  allowUnknown: false,
  failureBudget: 0,
  onFailure: "rollback",
} as const;
