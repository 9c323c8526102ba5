// The writable fields of a record as the real serializer declares them: type, nullability, bounds,
// and which a create requires. Read by the checks of JSON bodies and of form bodies alike.

import type { WritableField } from "../families.js";

export type FieldRule =
  /** A primary key of another table (`plugin`): any integer, checked against what exists. */
  | { kind: "related"; nullable: boolean }
  /** A 32-bit integer column. */
  | { kind: "integer"; nullable: boolean }
  | { kind: "boolean"; nullable: boolean }
  | { kind: "string"; nullable: boolean; maxLength: number };

export const INT_MIN = -2_147_483_648;
export const INT_MAX = 2_147_483_647;

/** In the serializer's declaration order, the order in which fields are checked. */
export const FIELD_RULES: Readonly<Record<WritableField, FieldRule>> = {
  plugin: { kind: "related", nullable: false },
  enabled: { kind: "boolean", nullable: false },
  order: { kind: "integer", nullable: false },
  name: { kind: "string", nullable: true, maxLength: 400 },
  description: { kind: "string", nullable: true, maxLength: 1000 },
  deleted: { kind: "boolean", nullable: false },
  match_action: { kind: "integer", nullable: true },
};

export const FIELD_ORDER = Object.keys(FIELD_RULES) as WritableField[];

/** The fields without a default: a create must send them. */
export const REQUIRED_FIELDS: readonly WritableField[] = ["plugin", "order"];
