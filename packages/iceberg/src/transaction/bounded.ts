/** Object store requests a transaction keeps in flight at once (reads of manifests, writes of them). */
export const IO_WIDTH = 8;

/**
 * Runs `run` over `items` with at most `width` calls in flight, and, when `weight` is given, no
 * new call while the weights in flight reach `budget` (one call always runs, whatever its
 * weight). Results come back in the items' order; the first failure rejects once the calls in
 * flight have settled.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limits: { width: number; budget?: number; weight?: (item: T) => number },
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const weigh = (item: T) => limits.weight?.(item) ?? 0;
  let next = 0;
  let inFlight = 0;
  let load = 0;
  let failure: { error: unknown } | undefined;
  return new Promise((resolve, reject) => {
    const pump = () => {
      if (failure !== undefined) {
        if (inFlight === 0) reject(failure.error);
        return;
      }
      if (next === items.length && inFlight === 0) {
        resolve(results);
        return;
      }
      while (next < items.length && inFlight < limits.width && (inFlight === 0 || load + weigh(items[next] as T) <= (limits.budget ?? Infinity))) {
        const index = next++;
        const item = items[index] as T;
        const weight = weigh(item);
        inFlight += 1;
        load += weight;
        run(item).then(
          (value) => {
            results[index] = value;
          },
          (error: unknown) => {
            failure ??= { error };
          },
        ).finally(() => {
          inFlight -= 1;
          load -= weight;
          pump();
        });
      }
    };
    pump();
  });
}
