/**
 * Summaries of repeated timing samples. Medians and quartiles rather than means: on a shared
 * two-core machine a few samples land on a busy core, and the median ignores them.
 */

export interface Summary {
  samples: number;
  median: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
  /** Median absolute deviation from the median (unscaled). */
  mad: number;
}

/** Linear interpolation between order statistics of an ascending array. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('summarize: no samples');
  // Negative samples are legitimate for paired differences (resume minus import-only child).
  for (const s of samples) if (!Number.isFinite(s)) throw new Error(`summarize: bad sample ${s}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const median = quantile(sorted, 0.5);
  const deviations = sorted.map((s) => Math.abs(s - median)).sort((a, b) => a - b);
  return {
    samples: sorted.length,
    median,
    p25: quantile(sorted, 0.25),
    p75: quantile(sorted, 0.75),
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    mad: quantile(deviations, 0.5),
  };
}

/** Subtract a constant (e.g. a baseline child's median) from every field that is a time. */
export function shiftSummary(s: Summary, minus: number): Summary {
  return {
    samples: s.samples,
    median: s.median - minus,
    p25: s.p25 - minus,
    p75: s.p75 - minus,
    min: s.min - minus,
    max: s.max - minus,
    mad: s.mad,
  };
}

/** Least-squares slope and intercept of y over x (used for bytes per step). */
export function linearFit(xs: readonly number[], ys: readonly number[]): { slope: number; intercept: number; r2: number } {
  if (xs.length !== ys.length || xs.length < 2) throw new Error('linearFit: need two or more points');
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  const slope = sxy / sxx;
  const r2 = syy === 0 ? 1 : (sxy * sxy) / (sxx * syy);
  return { slope, intercept: my - slope * mx, r2 };
}

/** Multiply every time field by `k` (e.g. per-run times to per-step times). */
export function scaleSummary(s: Summary, k: number): Summary {
  return {
    samples: s.samples,
    median: s.median * k,
    p25: s.p25 * k,
    p75: s.p75 * k,
    min: s.min * k,
    max: s.max * k,
    mad: s.mad * k,
  };
}
