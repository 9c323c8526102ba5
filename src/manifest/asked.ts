// What a manifest asks, without where it says it (moving a block or splitting a file changes none of
// it): heal's memory of a family in sync, and a rollout's identity (which journal it resumes).

import { createHash } from "node:crypto";
import type { DesiredFamily, DesiredState, RolloutSpec } from "./types.js";

/** For an owner: its mark goes on every record written. */
function familyAsks(family: DesiredFamily, owner: string | undefined): unknown {
  return {
    owner: owner ?? null,
    prune: family.prune,
    protect: (family.protect ?? []).map((item) => item.pattern),
    fields: family.fields ?? null,
    explicitOrder: family.explicitOrder,
    configs: family.configs.map((config) => [config.id ?? null, config.fields]),
  };
}

export function familyFingerprint(family: DesiredFamily, owner: string | undefined): string {
  return sha256(JSON.stringify(familyAsks(family, owner)));
}

function rolloutAsks(rollout: RolloutSpec | undefined): unknown {
  if (rollout === undefined) return null;
  const { source: _source, waves, ...rules } = rollout;
  return { ...rules, waves: waves.map(({ source: _place, ...wave }) => wave) };
}

/** `salt`: the server it is applied to. */
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

/** One config but its place (order): the change a rollout judged there. */
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
