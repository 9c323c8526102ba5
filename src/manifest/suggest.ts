// "Did you mean ...?" for misspelt keys and names: the closest candidate by edit distance, when
// it is close enough to be a plausible typo.

export function suggestClosest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(needle, candidate.toLowerCase(), bestDistance);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  // A third of the length, at least 1 and at most 3 edits: "enabeld" -> "enabled", not "id" -> "name".
  const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(needle.length, best.length) / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** `; did you mean "x"?`, or "". */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const suggestion = suggestClosest(input, candidates);
  return suggestion === undefined ? "" : `; did you mean "${suggestion}"?`;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions, the commonest typo);
// gives up once a whole row reaches `limit`, since the caller only wants closer ones.
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  // Keys are short; long inputs (hostile or not) are never typos of a key.
  if (a.length > 64 || b.length > 64) return limit;
  let previousPrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMinimum = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (previousPrevious[j - 2] ?? 0) + 1);
      }
      current.push(value);
      rowMinimum = Math.min(rowMinimum, value);
    }
    if (rowMinimum >= limit) return limit;
    previousPrevious = previous;
    previous = current;
  }
  return previous[b.length] ?? limit;
}
