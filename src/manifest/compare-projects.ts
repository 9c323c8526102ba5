// The orders the manifest's results are sorted in, the same on every machine.

/** Code-unit comparison, not localeCompare: the order must not depend on the machine's locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Decimal ids numerically (2 before 10), then the others (`@current`) as text. */
export function compareProjects(a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a);
  const bNumeric = /^\d+$/.test(b);
  if (aNumeric && bNumeric) return a.length - b.length || compareText(a, b);
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return compareText(a, b);
}
