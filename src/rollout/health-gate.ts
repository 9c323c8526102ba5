// The health gate of a rollout: what a wave is judged on, per project. One interface, so that
// another signal (a Prometheus query, a webhook that answers pass or fail) is a new module beside
// log-health.ts and the rollout does not change.

import type { FamilyName } from "../families.js";

/** A record a wave created or updated, as the re-read after the wave found it. */
export interface JudgedConfig {
  family: FamilyName;
  id: number;
  name: string | null;
  /** As the re-read found it: a disabled plugin runs on no event, so it logs nothing to judge. */
  enabled: boolean;
  /**
   * A frontend app: it runs in the browser and has no logs. One of its own family, or one that the
   * list of a family with logs also shows (posthog-2024's plugin_configs lists the frontend apps,
   * so a manifest may manage one there): the project's list of its own family holds its id.
   */
  frontendApp: boolean;
  /**
   * When the wave wrote it, as the service stamped the write (its `updated_at` as read right after
   * the wave's writes, not a later one that a change the manifest does not manage may have moved):
   * what it logged after this is the change's doing, on the service's own clock, whatever this
   * machine's clock says.
   */
  writtenAt?: Date;
}

export interface WaveToJudge {
  wave: string;
  /** When the wave's writes were all made: what was logged after this is the wave's doing. */
  since: Date;
  projects: { project: string; configs: JudgedConfig[] }[];
}

/**
 * A project's verdict: `pass`/`fail` on the figures, `unknown` (too little to judge: passes only
 * when allowed), `nothing_to_judge` (the wave changed nothing the gate can read: passes).
 */
export interface ProjectHealth {
  project: string;
  status: "pass" | "fail" | "unknown" | "nothing_to_judge";
  passed: boolean;
  /** The figures it was judged on, for the output and the journal. */
  figures: Record<string, number>;
  /** One line in words: `3 ERROR of 120 entries (2.5%, at most 5%)`. */
  summary: string;
}

export interface HealthGate {
  /** What the gate reads, for the output: `logs`. */
  readonly signal: string;
  judge(wave: WaveToJudge, abort: AbortSignal): Promise<ProjectHealth[]>;
}
