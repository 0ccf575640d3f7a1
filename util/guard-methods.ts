/** The keys of `T` whose values are methods returning a promise. */
type AsyncMethodKeys<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof T];

/**
 * `target`'s async methods `names`, each checking `guard` first: a refusal rejects the call's
 * promise (it is never thrown synchronously), and the method runs on `target` itself. The
 * runtime hands out its repositories this way so every call fails once it is closed.
 */
export function guardMethods<T extends object, K extends AsyncMethodKeys<T>>(
  guard: () => void,
  target: T,
  names: readonly K[],
): Pick<T, K> {
  const guarded: Partial<Pick<T, K>> = {};
  for (const name of names) {
    const method = target[name] as (...args: unknown[]) => Promise<unknown>;
    guarded[name] = (async (...args: unknown[]) => {
      guard();
      return method.apply(target, args);
    }) as T[K];
  }
  return guarded as Pick<T, K>;
}
