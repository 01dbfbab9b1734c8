// Charts are drawn with Chart.js: maintained, small enough for a desktop app (~70 kB gzip with
// only the parts registered here), and it draws horizontal bars, grouped bars, log scales and
// time lines, which is all the dashboard needs. Every chart has a table beside it with the same
// numbers, for screen readers and for copying.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type Plugin,
} from "chart.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LogarithmicScale, LineController, LineElement, PointElement, Tooltip, Legend);

/** Draws a vertical line at x = `value` on the x axis (the target, at 100 %). */
export function targetLine(value: number, colour: string): Plugin<"bar"> {
  return {
    id: "target-line",
    afterDatasetsDraw(c) {
      const x = c.scales["x"]?.getPixelForValue(value);
      if (x === undefined) return;
      const { top, bottom } = c.chartArea;
      const ctx = c.ctx;
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.restore();
    },
  };
}

/** Svelte action: a Chart.js chart on a canvas, redrawn when its configuration changes. */
export function chart(node: HTMLCanvasElement, config: ChartConfiguration) {
  let c = new Chart(node, config);
  return {
    update(next: ChartConfiguration) {
      c.destroy();
      c = new Chart(node, next);
    },
    destroy() {
      c.destroy();
    },
  };
}

export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return "—";
  if (v < 0.01) return v.toFixed(4);
  if (v < 10) return v.toFixed(3);
  return v.toFixed(1);
}
