// The two behaviours the emulator can take, as data: handlers consult these flags instead of
// branching on the profile name, so every difference between the profiles is listed here.

import type { FamilyName } from "../families.js";
import type { ProfileName } from "./types.js";

export interface ProfileBehaviour {
  readonly name: ProfileName;
  /**
   * "disjoint": a record belongs to the family it was created through.
   * "overlapping": plugin_configs shows every config, pipeline_frontend_apps_configs those of frontend apps.
   */
  readonly families: "disjoint" | "overlapping";
  /** "soft-delete" sets deleted and disables; "disable" only sets enabled false. */
  readonly deleteMode: "soft-delete" | "disable";
  /** Status of DELETE on an unknown id. */
  readonly deleteUnknownStatus: 404 | 500;
  /** What the keys of a rearrange body name. */
  readonly rearrangeKeyedBy: "config" | "plugin";
  /** Whether scoped keys (anything but unscoped or exactly ["*"]) are refused on rearrange, job, frontend. */
  readonly refusesScopedKeysOnActions: boolean;
  readonly pluginWritableOnUpdate: boolean;
  /** Whether name and description are stored trimmed (trim-as-service.ts), as DRF's CharField does. */
  readonly trimsText: boolean;
  /** Whether a null or "" name/description is replaced by the plugin's own on output. */
  readonly fallsBackToPluginText: boolean;
  /** Whether list and rearrange responses carry plugin_info; without it they send null there. */
  readonly pluginInfoInCollections: boolean;
  readonly jobResponse: "record" | "empty";
  /** Whether create and update also take form-encoded and multipart bodies, not only JSON. */
  readonly acceptsFormBodies: boolean;
  /**
   * How `config` is written in responses: "string", as the seed interface gives it, or "object",
   * the JSON object the real service's serializer returns (`{}` when empty).
   */
  readonly configAs: "string" | "object";
  readonly retryAfterHeader: boolean;
}

export const PROFILES = {
  seed: {
    name: "seed",
    families: "disjoint",
    deleteMode: "soft-delete",
    deleteUnknownStatus: 404,
    rearrangeKeyedBy: "config",
    refusesScopedKeysOnActions: false,
    pluginWritableOnUpdate: true,
    trimsText: false,
    fallsBackToPluginText: false,
    pluginInfoInCollections: true,
    jobResponse: "record",
    acceptsFormBodies: false,
    configAs: "string",
    retryAfterHeader: true,
  },
  "posthog-2024": {
    name: "posthog-2024",
    families: "overlapping",
    deleteMode: "disable",
    deleteUnknownStatus: 500,
    rearrangeKeyedBy: "plugin",
    refusesScopedKeysOnActions: true,
    pluginWritableOnUpdate: false,
    trimsText: true,
    fallsBackToPluginText: true,
    pluginInfoInCollections: false,
    jobResponse: "empty",
    acceptsFormBodies: true,
    configAs: "object",
    retryAfterHeader: false,
  },
} as const satisfies Record<ProfileName, ProfileBehaviour>;

export function getProfile(name: ProfileName): ProfileBehaviour {
  return PROFILES[name];
}

/** Whether a record is reachable through a family, given how the profile relates families. */
export function isInFamily(
  profile: ProfileBehaviour,
  record: { family: FamilyName },
  family: FamilyName,
  pluginIsFrontendApp: boolean,
): boolean {
  if (profile.families === "disjoint") return record.family === family;
  return family === "plugin_configs" || pluginIsFrontendApp;
}
