// Targeting (--target/--exclude): only the changes of records whose name a target glob matches and
// no exclude glob does. A family's reorder is kept only if every record it moves is targeted: half
// a reorder could put records at orders nobody asked for.

import { matchesAnyGlob } from "../record-name.js";
import type { OrderMove, PlannedChange, PlanTargets } from "./types.js";

export function isPartial(targets: PlanTargets | undefined): targets is PlanTargets {
  return targets !== undefined && (targets.target.length > 0 || targets.exclude.length > 0);
}

export function selectTargets(
  changes: PlannedChange[],
  moves: OrderMove[],
  targets: PlanTargets | undefined,
): { changes: PlannedChange[]; moves: OrderMove[]; reorderLeftOut: boolean } {
  if (!isPartial(targets)) return { changes, moves, reorderLeftOut: false };
  const target = matchesAnyGlob(targets.target);
  const exclude = matchesAnyGlob(targets.exclude);
  const targeted = (name: string | null) => (targets.target.length === 0 || target(name)) && !exclude(name);
  const kept = changes.filter((change) => targeted(change.name));
  const allMovesTargeted = moves.every((move) => targeted(move.name));
  return {
    changes: kept,
    moves: allMovesTargeted ? moves : [],
    reorderLeftOut: !allMovesTargeted && moves.length > 0,
  };
}
