// A bar chart drawn as SVG on the server (no chart library, no script): revenue per hour or day.
import { raw } from "hono/html";

export type Bar = { label: string; tooltip: string; value: number };

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string);

/** A "nice" axis maximum and step for values up to `max` (1, 2, 2.5 or 5 times a power of ten). */
export function niceScale(max: number, ticks = 4): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const rough = max / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  return { top: Math.ceil(max / step) * step, step };
}

export function barChart(
  bars: Bar[],
  opts: { formatValue: (v: number) => string; labelEvery?: number; title: string; emptyText?: string },
) {
  const width = 1060;
  const height = 300;
  const m = { top: 16, right: 12, bottom: 34, left: 64 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const { top, step } = niceScale(max);
  const y = (v: number) => m.top + plotH - (v / top) * plotH;
  const slot = plotW / Math.max(1, bars.length);
  const barW = Math.max(2, Math.min(56, slot * 0.62));
  const every = opts.labelEvery ?? 1;
  const parts: string[] = [];

  for (let v = 0; v <= top + step / 2; v += step) {
    const yy = y(v).toFixed(1);
    parts.push(`<line class="chart-grid" x1="${m.left}" x2="${width - m.right}" y1="${yy}" y2="${yy}"/>`);
    parts.push(
      `<text class="chart-axis" x="${m.left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle">${escape(opts.formatValue(v))}</text>`,
    );
  }
  bars.forEach((bar, i) => {
    const cx = m.left + slot * i + slot / 2;
    if (bar.value > 0) {
      const h = Math.max(1.5, plotH - (y(bar.value) - m.top));
      parts.push(
        `<rect class="chart-bar" x="${(cx - barW / 2).toFixed(1)}" y="${(m.top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" rx="3"><title>${escape(bar.tooltip)}</title></rect>`,
      );
    } else {
      parts.push(
        `<rect class="chart-hit" x="${(cx - slot / 2).toFixed(1)}" y="${m.top}" width="${slot.toFixed(1)}" height="${plotH}"><title>${escape(bar.tooltip)}</title></rect>`,
      );
    }
    if (i % every === 0) {
      parts.push(
        `<text class="chart-axis" x="${cx.toFixed(1)}" y="${height - m.bottom + 18}" text-anchor="middle">${escape(bar.label)}</text>`,
      );
    }
  });
  parts.push(`<line class="chart-baseline" x1="${m.left}" x2="${width - m.right}" y1="${m.top + plotH}" y2="${m.top + plotH}"/>`);
  if (max === 0) {
    parts.push(
      `<text class="chart-empty" x="${m.left + plotW / 2}" y="${m.top + plotH / 2}" text-anchor="middle">${escape(opts.emptyText ?? "No data in this period")}</text>`,
    );
  }
  return raw(
    `<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escape(opts.title)}" xmlns="http://www.w3.org/2000/svg"><title>${escape(opts.title)}</title>${parts.join("")}</svg>`,
  );
}
