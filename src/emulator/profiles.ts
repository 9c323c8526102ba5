// The two behaviours the emulator can take, as data: handlers consult these flags instead of
// branching on the profile name, so every difference between the profiles is listed here.

import type { ProfileName } from "./types.js";

export const PROFILES = {
  seed: {
    name: "seed",
    /** "disjoint": a record belongs to the family it was created through; "overlapping": plugin_configs
     * shows every config, pipeline_frontend_apps_configs those of frontend apps. */
    families: "disjoint",
    /** "soft-delete" sets deleted and disables; "disable" only sets enabled false. */
    deleteMode: "soft-delete",
    /** Status of DELETE on an unknown id. */
    deleteUnknownStatus: 404,
    /** What the keys of a rearrange body name. */
    rearrangeKeyedBy: "config",
    /** Whether scoped keys (anything but unscoped or exactly ["*"]) are refused on rearrange, job, frontend. */
    refusesScopedKeysOnActions: false,
    pluginWritableOnUpdate: true,
    /** Whether name and description are stored trimmed (trim-as-service.ts), as DRF's CharField does. */
    trimsText: false,
    /** Whether a null or "" name/description is replaced by the plugin's own on output. */
    fallsBackToPluginText: false,
    /** Whether list and rearrange responses carry plugin_info; without it they send null there. */
    pluginInfoInCollections: true,
    jobResponse: "record",
    /** Whether create and update also take form-encoded and multipart bodies, not only JSON. */
    acceptsFormBodies: false,
    /** How `config` is written in responses: the seed interface's string, or the JSON object the real
     * service's serializer returns (`{}` when empty). */
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
} as const satisfies Record<ProfileName, { name: ProfileName; [flag: string]: unknown }>;

/** Either profile: each flag's type is the union of its values, so both must set every flag. */
export type ProfileBehaviour = (typeof PROFILES)[ProfileName];
