// A record's plugin `config`: stored as JSON text, written as the profile writes it (the seed's
// string, or posthog-2024's object with its attachments), and set only through a form body, as
// the real service's serializer does (PostHog's posthog/api/plugin.py, mid-2024).

import { FormBody, type UploadedFile } from "./form-body.js";
import { serverError } from "./http-error.js";
import type { ProfileBehaviour } from "./profiles.js";
import type { StoredRecord } from "./types.js";

export const EMPTY_CONFIG = "{}";

/** What a create or update body does to the config: new JSON text, files to attach, keys to detach. */
export interface ConfigChanges {
  config?: string;
  attach: [string, UploadedFile][];
  detach: string[];
}

/** `config` as the profile writes it in a response; posthog-2024 shows each attachment under its key. */
export function renderConfig(record: StoredRecord, profile: ProfileBehaviour): unknown {
  if (profile.configAs === "string") return record.config;
  let config: unknown;
  try {
    config = record.config === EMPTY_CONFIG ? {} : JSON.parse(record.config);
  } catch {
    // Text no form body could have stored (a seed data file's own string): shown as it is.
    return record.config;
  }
  const attachments = record.attachments ?? [];
  if (attachments.length === 0 || typeof config !== "object" || config === null || Array.isArray(config)) {
    return config;
  }
  const shown: Record<string, unknown> = { ...config };
  for (const { uid, key, size, name, type } of attachments)
    shown[key] = { uid, saved: true, size, name, type };
  return shown;
}

/**
 * What a create or update body does to the config. The serializer never reads `config` from a
 * JSON body. From a form body (the service's UI sends multipart) `_fix_formdata_config_json`
 * parses a `config` text field that is not empty, files left out: text that is not JSON fails
 * inside the service, a 500 after validation and before any write. Files named
 * `add_attachment[KEY]` are attached to KEY, and text fields `remove_attachment[KEY]` detach it.
 */
export function readConfigChanges(body: unknown): ConfigChanges {
  if (!(body instanceof FormBody)) return { attach: [], detach: [] };
  const changes: ConfigChanges = {
    attach: body.fileEntries().flatMap(([name, file]) => {
      const key = /^add_attachment\[([^\]]+)\]$/.exec(name)?.[1];
      return key === undefined ? [] : [[key, file] as [string, UploadedFile]];
    }),
    detach: body.fieldNames().flatMap((name) => /^remove_attachment\[([^\]]+)\]$/.exec(name)?.[1] ?? []),
  };
  const text = body.textField("config");
  if (text === undefined || text === "") return changes;
  try {
    return { ...changes, config: JSON.stringify(JSON.parse(text)) };
  } catch {
    throw serverError();
  }
}
