// The defaults of `rollout:` (cli-contract.md, "Progressive rollout"), for the manifest reader and the
// rollout's gate; constants only, so the gate loads no reader.

export const ROLLOUT_DEFAULTS = {
  bakeMs: 600_000,
  maxErrorRatio: 0.05,
  minEntries: 20,
  allowUnknown: false,
  failureBudget: 0,
  onFailure: "rollback",
} as const;
