/** Summary statistics and fits used by the scenarios. */

/** The median of `values` (mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * The `p`-th percentile (0-100) of `values`, linearly interpolated between closest ranks
 * (the common "R-7" definition, as numpy's default); NaN when empty.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] ?? Number.NaN;
  const highValue = sorted[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (rank - low);
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** A straight line `y = intercept + slope * x` with its coefficient of determination. */
export interface LinearFit {
  slope: number;
  intercept: number;
  r2: number;
}

/** Ordinary least squares of `ys` over `xs`. */
export function leastSquares(xs: readonly number[], ys: readonly number[]): LinearFit {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return { slope: Number.NaN, intercept: Number.NaN, r2: Number.NaN };
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i += 1) {
    const dx = (xs[i] ?? 0) - mx;
    sxy += dx * ((ys[i] ?? 0) - my);
    sxx += dx * dx;
  }
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  return {
    slope,
    intercept,
    r2: rSquared(ys.slice(0, n), (i) => intercept + slope * (xs[i] ?? 0)),
  };
}

/** `y = a + b x + c x²` with its coefficient of determination. */
export interface QuadraticFit {
  a: number;
  b: number;
  c: number;
  r2: number;
}

/** Least-squares quadratic of `ys` over `xs` (normal equations, solved by Cramer's rule). */
export function quadraticFit(xs: readonly number[], ys: readonly number[]): QuadraticFit {
  const n = Math.min(xs.length, ys.length);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  let t0 = 0;
  let t1 = 0;
  let t2 = 0;
  for (let i = 0; i < n; i += 1) {
    const x = xs[i] ?? 0;
    const y = ys[i] ?? 0;
    s0 += 1;
    s1 += x;
    s2 += x * x;
    s3 += x * x * x;
    s4 += x * x * x * x;
    t0 += y;
    t1 += x * y;
    t2 += x * x * y;
  }
  const det3 = (m: number[][]) => {
    const [r0 = [], r1 = [], r2 = []] = m;
    const [a = 0, b = 0, c = 0] = r0;
    const [d = 0, e = 0, f = 0] = r1;
    const [g = 0, h = 0, k = 0] = r2;
    return a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g);
  };
  const base = [
    [s0, s1, s2],
    [s1, s2, s3],
    [s2, s3, s4],
  ];
  const rhs = [t0, t1, t2];
  const d = det3(base);
  const solve = (column: number) =>
    det3(base.map((row, i) => row.map((value, j) => (j === column ? (rhs[i] ?? 0) : value)))) / d;
  const a = solve(0);
  const b = solve(1);
  const c = solve(2);
  const x = (i: number) => xs[i] ?? 0;
  return { a, b, c, r2: rSquared(ys.slice(0, n), (i) => a + b * x(i) + c * x(i) * x(i)) };
}

function rSquared(ys: readonly number[], predict: (i: number) => number): number {
  const my = mean(ys);
  let ssRes = 0;
  let ssTot = 0;
  ys.forEach((y, i) => {
    ssRes += (y - predict(i)) ** 2;
    ssTot += (y - my) ** 2;
  });
  return ssTot === 0 ? 1 : 1 - ssRes / ssTot;
}
