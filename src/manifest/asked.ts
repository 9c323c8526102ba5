// What a manifest asks, without where it says it: each family's configs and settings, the owner,
// the server and the rollout, as data. Moving a block, adding a comment, splitting a file or naming
// it another way (`-f ./pcsync.yaml`) changes none of it. Heal's memory of a family in sync and a
// rollout's identity (which journal a run resumes, which halt it honours) are both this.

import { createHash } from "node:crypto";
import type { DesiredFamily, DesiredState, RolloutSpec } from "./types.js";

/** What the manifest asks of one family, for an owner (its mark goes on every record written). */
export function familyAsks(family: DesiredFamily, owner: string | undefined): unknown {
  return {
    owner: owner ?? null,
    prune: family.prune,
    protect: (family.protect ?? []).map((item) => item.pattern),
    fields: family.fields ?? null,
    explicitOrder: family.explicitOrder,
    configs: family.configs.map((config) => [config.id ?? null, config.fields]),
  };
}

/** `familyAsks` as a digest. */
export function familyFingerprint(family: DesiredFamily, owner: string | undefined): string {
  return sha256(JSON.stringify(familyAsks(family, owner)));
}

/** The rollout block as asked: its waves and rules, without their places. */
function rolloutAsks(rollout: RolloutSpec | undefined): unknown {
  if (rollout === undefined) return null;
  const { source: _source, waves, ...rules } = rollout;
  return { ...rules, waves: waves.map(({ source: _place, ...wave }) => wave) };
}

/** A digest of what the whole manifest asks, with `salt` (the server it is applied to) first. */
export function manifestFingerprint(salt: string, desired: DesiredState): string {
  const owner = desired.owner?.name;
  return sha256(
    `${salt}\u0000${JSON.stringify({
      baseUrl: desired.baseUrl ?? null,
      owner: owner ?? null,
      rollout: rolloutAsks(desired.rollout),
      families: desired.families.map((family) => [family.project, family.family, familyAsks(family, owner)]),
    })}`,
  );
}

/**
 * What the manifest asks of one config of a family, but its place (order): the change a rollout
 * judged there. Undefined when the family has no config of that name.
 */
export function configFingerprint(
  desired: DesiredState,
  where: { project: string; family: string; name: string },
): string | undefined {
  const family = desired.families.find(
    (entry) => entry.project === where.project && entry.family === where.family,
  );
  const config = family?.configs.find((entry) => entry.fields.name === where.name);
  if (config === undefined) return undefined;
  const { order: _order, ...fields } = config.fields;
  return sha256(JSON.stringify([desired.owner?.name ?? null, config.id ?? null, fields])).slice(0, 32);
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
