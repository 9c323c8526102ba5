// Appends one array to another without spreading it into push's arguments: a spread passes each
// element as an argument, and past about 120,000 of them the call throws a RangeError.

export function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}
