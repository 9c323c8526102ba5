// Runs async work over items with at most `limit` in flight; results keep the items' order. The
// first failure stops it taking new items: the work in flight finishes, then that failure is thrown.

export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  // Every worker is waited for, so nothing still runs once this returns or throws.
  const settled = await Promise.allSettled(workers);
  const failure = settled.find((outcome) => outcome.status === "rejected");
  if (failure !== undefined) throw failure.reason;
  return results;
}
