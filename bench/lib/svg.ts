/**
 * Line charts as standalone SVG, no dependencies: axes (linear or log10), grid, tick labels,
 * one polyline with point markers per series, and a legend. Enough for "metric vs size" charts.
 */

export interface ChartSeries {
  name: string;
  points: { x: number; y: number }[];
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  xLog: boolean;
  yLog: boolean;
  series: ChartSeries[];
  /** Optional one-line note under the title (e.g. the machine, the profile). */
  subtitle?: string;
}

const WIDTH = 780;
const HEIGHT = 440;
const MARGIN = { left: 84, right: 220, top: 56, bottom: 56 };
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Compact number labels: 1.2k, 3.4M, 0.5. */
export function formatTick(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e9) return `${trim(v / 1e9)}G`;
  if (a >= 1e6) return `${trim(v / 1e6)}M`;
  if (a >= 1e3) return `${trim(v / 1e3)}k`;
  if (a >= 1) return trim(v);
  return v.toPrecision(2).replace(/\.?0+$/, '');
}

function trim(v: number): string {
  return (Math.round(v * 100) / 100).toString();
}

interface Axis {
  toPx: (v: number) => number;
  ticks: number[];
}

function logAxis(min: number, max: number, pxFrom: number, pxTo: number): Axis {
  const lo = Math.floor(Math.log10(min));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(max)));
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e++) ticks.push(10 ** e);
  const toPx = (v: number) => pxFrom + ((Math.log10(v) - lo) / (hi - lo)) * (pxTo - pxFrom);
  return { toPx, ticks };
}

function linearAxis(min: number, max: number, pxFrom: number, pxTo: number): Axis {
  const lo = Math.min(0, min);
  const span = max - lo || 1;
  const rawStep = span / 5;
  const mag = 10 ** Math.floor(Math.log10(rawStep));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= 6) ?? 10 * mag;
  const top = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= top + step / 2; v += step) ticks.push(v);
  const first = ticks[0]!;
  const last = ticks[ticks.length - 1]!;
  const toPx = (v: number) => pxFrom + ((v - first) / (last - first || 1)) * (pxTo - pxFrom);
  return { toPx, ticks };
}

export function lineChartSvg(spec: ChartSpec): string {
  const pts = spec.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const usable = pts.filter((p) => (!spec.xLog || p.x > 0) && (!spec.yLog || p.y > 0));
  const plotLeft = MARGIN.left;
  const plotRight = WIDTH - MARGIN.right;
  const plotTop = MARGIN.top;
  const plotBottom = HEIGHT - MARGIN.bottom;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(`<text x="${WIDTH / 2 - MARGIN.right / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`);
  if (spec.subtitle) {
    out.push(`<text x="${WIDTH / 2 - MARGIN.right / 2}" y="40" text-anchor="middle" fill="#555">${escapeXml(spec.subtitle)}</text>`);
  }
  if (usable.length === 0) {
    out.push(`<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no data</text></svg>`);
    return out.join('\n');
  }
  const xs = usable.map((p) => p.x);
  const ys = usable.map((p) => p.y);
  const xAxis = spec.xLog
    ? logAxis(Math.min(...xs), Math.max(...xs), plotLeft, plotRight)
    : linearAxis(Math.min(...xs), Math.max(...xs), plotLeft, plotRight);
  const yAxis = spec.yLog
    ? logAxis(Math.min(...ys), Math.max(...ys), plotBottom, plotTop)
    : linearAxis(Math.min(...ys), Math.max(...ys), plotBottom, plotTop);
  for (const t of xAxis.ticks) {
    const x = xAxis.toPx(t).toFixed(1);
    out.push(`<line x1="${x}" y1="${plotTop}" x2="${x}" y2="${plotBottom}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x}" y="${plotBottom + 18}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  for (const t of yAxis.ticks) {
    const y = yAxis.toPx(t).toFixed(1);
    out.push(`<line x1="${plotLeft}" y1="${y}" x2="${plotRight}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${plotLeft - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`);
  }
  out.push(`<rect x="${plotLeft}" y="${plotTop}" width="${plotRight - plotLeft}" height="${plotBottom - plotTop}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${(plotLeft + plotRight) / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${(plotTop + plotBottom) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`);
  spec.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const sp = s.points
      .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && (!spec.xLog || p.x > 0) && (!spec.yLog || p.y > 0))
      .sort((a, b) => a.x - b.x);
    const coords = sp.map((p) => `${xAxis.toPx(p.x).toFixed(1)},${yAxis.toPx(p.y).toFixed(1)}`);
    if (coords.length > 1) {
      const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
      out.push(`<polyline points="${coords.join(' ')}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    }
    for (const c of coords) {
      const [cx, cy] = c.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="3.5" fill="${color}"/>`);
    }
    const ly = plotTop + 14 + i * 20;
    const lx = plotRight + 14;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${lx + 30}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
