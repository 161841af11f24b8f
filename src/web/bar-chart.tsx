/**
 * A bar chart (Chart.js, tree-shaken to bars on category and linear axes) with its numbers
 * as an accessible table in a `<details>` beside it. The canvas is an image with a label
 * (`role="img"`); the table is the text alternative and what screen readers and tests read.
 *
 * Chart.js draws on a canvas and sets the canvas size through the CSSOM (`element.style`),
 * which the page's strict Content-Security-Policy allows; it injects no `<style>` and no
 * `style` attribute. Animations are off (nothing moves; the chart is final at once).
 *
 * @module
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "preact/hooks";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Colours of the series, in order (distinct in light and dark themes). */
const PALETTE = ["#2f6fdb", "#e0782b", "#2a9d5c", "#c2417a", "#7b5cd6", "#8a7a2a", "#1f9fb0", "#b23b3b"];

/** One series of a chart. */
export interface ChartSeries {
  label: string;
  values: number[];
}

/** Props of {@link BarChart}. */
export interface BarChartProps {
  /** A class for tests and styling (`chart-sessions`). */
  name: string;
  /** The chart's caption: also its accessible name. */
  title: string;
  /** One label per bar group (days, models). */
  labels: string[];
  series: ChartSeries[];
  /** Stack the series in one bar per label. */
  stacked?: boolean;
  /** Bars along the x axis (long labels such as model names read better). */
  horizontal?: boolean;
  /** How the table shows a value. */
  format?: (value: number) => string;
  /** The table's first column header. */
  labelHeader: string;
}

/** A labelled bar chart and its table. */
export function BarChart(props: BarChartProps): preact.JSX.Element {
  const canvas = useRef<HTMLCanvasElement>(null);
  const format = props.format ?? ((n: number) => String(n));
  const data = JSON.stringify([props.labels, props.series, props.stacked, props.horizontal]);

  useEffect(() => {
    if (canvas.current === null) return;
    const styles = getComputedStyle(document.documentElement);
    const fg = styles.getPropertyValue("--muted").trim() || "#666";
    const grid = styles.getPropertyValue("--line").trim() || "#ddd";
    const axis = { stacked: props.stacked === true, ticks: { color: fg }, grid: { color: grid } };
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: props.labels,
        datasets: props.series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: PALETTE[i % PALETTE.length] })),
      },
      options: {
        indexAxis: props.horizontal === true ? "y" : "x",
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: { x: axis, y: { ...axis, beginAtZero: true } },
        plugins: { legend: { display: props.series.length > 1, labels: { color: fg } } },
      },
    });
    return () => chart.destroy();
  }, [data]);

  return (
    <figure class={`chart ${props.name}`}>
      <figcaption>{props.title}</figcaption>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title} (chart; the numbers are in the table below)`} />
      </div>
      <details class="chart-table">
        <summary>{props.title}: the numbers</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{props.labelHeader}</th>
              {props.series.map((s) => (
                <th scope="col" key={s.label}>
                  <bdi>{s.label}</bdi>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.labels.map((label, row) => (
              <tr key={label}>
                <th scope="row">
                  <bdi>{label}</bdi>
                </th>
                {props.series.map((s) => (
                  <td key={s.label}>{format(s.values[row] ?? 0)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
