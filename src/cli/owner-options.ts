// `--takeover` on plan, apply and watch: configs may claim records another owner marked.

import { Option } from "commander";

export interface OwnerFlags {
  takeover?: boolean;
}

export function takeoverOption(): Option {
  return new Option(
    "--takeover",
    "with `owner:`, let configs claim records another owner marked (they get this manifest's mark)",
  );
}
