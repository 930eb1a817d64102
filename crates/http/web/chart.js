// Charts as plain SVG built with DOM calls, drawn at the width they are shown at (so that their text
// is of the page's size on a phone too): bars with labelled axes, and a grid of cells for a heatmap.
// A calendar of days is a CSS grid of cells. Every label goes in as text.

const SVG = "http://www.w3.org/2000/svg";

export function svg(name, attrs = {}) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function text(x, y, value, attrs = {}) {
  const t = svg("text", { x, y, ...attrs });
  t.textContent = value;
  return t;
}

function titled(node, value) {
  const t = svg("title");
  t.textContent = value;
  node.append(t);
  return node;
}

/**
 * Bars, one per label, with a y axis (0, half and the largest value, formatted by `format`) and x
 * labels (every few, so that they do not overlap: `short` shortens them), each bar titled with its
 * full label and value. `width` is the width it is shown at, in CSS pixels.
 */
export function barChart({ title, labels, values, format = String, short = (l) => l, width = 640, height = 180, className = "" }) {
  const w = Math.max(240, Math.round(width));
  const max = Math.max(0, ...values);
  // The y axis's labels, at 0, half and the largest value; the plot starts right of the longest
  // (11 px digits are at most 7 px wide).
  const ticks = [0, 0.5, 1].map((f) => [f, max > 0 || f === 0 ? format(max * f) : ""]);
  const left = Math.max(56, 12 + 7 * Math.max(...ticks.map(([, label]) => label.length)));
  const bottom = 24;
  const top = 10;
  const plot = height - bottom - top;
  const root = svg("svg", {
    viewBox: `0 0 ${w} ${height}`,
    width: w,
    height,
    role: "img",
    "aria-label": title,
    class: `chart ${className}`.trim(),
  });
  titled(root, title);
  // The y axis: gridlines at 0, half and the largest value.
  for (const [f, label] of ticks) {
    const y = top + plot - f * plot;
    root.append(svg("line", { x1: left, x2: w - 4, y1: y, y2: y, class: "grid" }));
    root.append(text(left - 6, y + 4, label, { class: "axis", "text-anchor": "end" }));
  }
  const n = labels.length;
  const step = n ? (w - left - 4) / n : 0;
  values.forEach((v, i) => {
    const h = max > 0 ? (v / max) * plot : 0;
    const bar = svg("rect", {
      x: left + i * step + Math.min(1, step / 4),
      y: top + plot - h,
      width: Math.max(1, step - Math.min(2, step / 2)),
      height: Math.max(0, h),
      class: "bar",
    });
    root.append(titled(bar, `${labels[i]}: ${format(v)}`));
  });
  // The x axis: as many labels as fit, about 64 px apart, the first and the last among them.
  const every = Math.max(1, Math.ceil(64 / Math.max(step, 1)));
  for (let i = 0; i < n; i += every) {
    const x = left + i * step + step / 2;
    root.append(text(x, height - 6, short(labels[i]), { class: "axis", "text-anchor": "middle" }));
  }
  root.append(svg("line", { x1: left, x2: w - 4, y1: top + plot, y2: top + plot, class: "axis-line" }));
  return root;
}

/**
 * A heatmap: `rows` (labels) × `columns` (labels) of counts, each cell shaded by its share of the
 * largest and titled with its count; row labels on the left, every few column labels on top.
 */
export function heatmap({ title, rows, columns, counts, width = 640, className = "" }) {
  const w = Math.max(240, Math.round(width));
  const left = 36;
  const top = 18;
  const cell = (w - left - 2) / columns.length;
  const rowHeight = Math.max(14, Math.min(24, cell));
  const height = top + rowHeight * rows.length + 2;
  const max = Math.max(0, ...counts.flat());
  const root = svg("svg", {
    viewBox: `0 0 ${w} ${height}`,
    width: w,
    height,
    role: "img",
    "aria-label": title,
    class: `chart heatmap ${className}`.trim(),
  });
  titled(root, title);
  const every = Math.max(1, Math.ceil(24 / Math.max(cell, 1)));
  columns.forEach((c, j) => {
    if (j % every === 0) root.append(text(left + j * cell + cell / 2, 12, c, { class: "axis", "text-anchor": "middle" }));
  });
  rows.forEach((r, i) => {
    const y = top + i * rowHeight;
    root.append(text(left - 6, y + rowHeight / 2 + 4, r, { class: "axis", "text-anchor": "end" }));
    columns.forEach((c, j) => {
      const n = counts[i][j] || 0;
      const level = max > 0 && n > 0 ? Math.ceil((n / max) * 4) : 0;
      const rect = svg("rect", {
        x: left + j * cell + 1,
        y: y + 1,
        width: Math.max(1, cell - 2),
        height: rowHeight - 2,
        class: `cell level-${level}`,
      });
      root.append(titled(rect, `${r} ${c}: ${n}`));
    });
  });
  return root;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The level (0 … 4) of `n` against the largest, `max`: 0 for nothing, else its quarter. */
function level(n, max) {
  return max > 0 && n > 0 ? Math.ceil((n / max) * 4) : 0;
}

/**
 * A calendar: `days` (`[{ day: "YYYY-MM-DD", count }]`, consecutive) as a CSS grid of cells, a
 * column per week (Sunday on top), each cell shaded by its share of the largest and titled with its
 * day and count (`unit`); the months above, Mon, Wed and Fri on the left, and a legend below. The
 * grid is an image named `label` for a screen reader.
 */
export function calendar({ days, label, unit }) {
  const max = Math.max(0, ...days.map((d) => d.count));
  const first = days.length ? new Date(`${days[0].day}T00:00:00Z`).getUTCDay() : 0;
  const weeks = Math.ceil((first + days.length) / 7);
  const grid = document.createElement("div");
  grid.className = "calendar";
  grid.setAttribute("role", "img");
  grid.setAttribute("aria-label", label);
  grid.style.setProperty("--weeks", String(weeks));
  const at = (node, row, column, span = 1) => {
    node.style.gridRow = String(row);
    node.style.gridColumn = `${column} / span ${span}`;
    return node;
  };
  ["Mon", "Wed", "Fri"].forEach((name, i) => {
    const t = document.createElement("span");
    t.className = "calendar-weekday";
    t.textContent = name;
    grid.append(at(t, 3 + 2 * i, 1));
  });
  days.forEach((d, i) => {
    const week = Math.floor((first + i) / 7);
    const weekday = (first + i) % 7;
    // A month is named above the week of its first day, where the grid has room for it.
    if (d.day.endsWith("-01") && week + 3 <= weeks) {
      const t = document.createElement("span");
      t.className = "calendar-month";
      t.textContent = MONTHS[Number(d.day.slice(5, 7)) - 1];
      grid.append(at(t, 1, week + 2, 3));
    }
    const cell = document.createElement("span");
    cell.className = `calendar-day level-${level(d.count, max)}`;
    cell.title = `${d.day}: ${d.count.toLocaleString("en-US")} ${unit}`;
    cell.dataset.day = d.day;
    cell.dataset.count = String(d.count);
    grid.append(at(cell, weekday + 2, week + 2));
  });
  const legend = document.createElement("div");
  legend.className = "calendar-legend";
  legend.setAttribute("aria-hidden", "true");
  legend.append("Less");
  for (let l = 0; l <= 4; l++) {
    const swatch = document.createElement("span");
    swatch.className = `calendar-day level-${l}`;
    legend.append(swatch);
  }
  legend.append("More");
  const box = document.createElement("div");
  box.className = "calendar-box";
  box.append(grid, legend);
  return box;
}
