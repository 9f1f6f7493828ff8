// ---- 6. training curves ------------------------------------------------------------------------
function chart(title, series, opts = {}) {
  const W = 460, H = 220, L = 54, R = 10, T = 24, B = 34;
  const pts = series.flatMap(s => s.points).filter(p => p[1] !== null && isFinite(p[1]) && (!opts.log || p[1] > 0));
  const box = el("div", { class: "chart" });
  if (!pts.length) { box.append(el("b", {}, title), el("p", { class: "muted" }, "no data")); return box; }
  const tf = v => opts.log ? Math.log10(v) : v;
  const xs = pts.map(p => p[0]), ys = pts.map(p => tf(p[1]));
  const x0 = Math.min(...xs), x1 = Math.max(...xs) || 1;
  let y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (y1 - y0 < 1e-12 * Math.max(1, Math.abs(y1))) {  // a constant: centre it
    const d = opts.log ? 0.3 : Math.abs(y0) * 0.2 || 1;
    y0 -= d; y1 += d;
  }
  const X = x => L + (x - x0) / ((x1 - x0) || 1) * (W - L - R), Y = v => T + (1 - (tf(v) - y0) / ((y1 - y0) || 1)) * (H - T - B);
  const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": title });
  svg.append(sv("text", { x: L, y: 14, "font-weight": "600" }, title));
  for (let k = 0; k <= 4; k++) {
    const v = y0 + (y1 - y0) * k / 4, yy = T + (1 - k / 4) * (H - T - B), label = opts.log ? Math.pow(10, v) : v;
    svg.append(sv("line", { x1: L, x2: W - R, y1: yy, y2: yy, stroke: "#eceff2" }), sv("text", { x: L - 4, y: yy + 4, "text-anchor": "end", "font-size": "10", fill: "#5c6670" }, Math.abs(label) < 0.01 && label !== 0 ? label.toExponential(1) : Number(label.toPrecision(3))));
  }
  const xl = opts.x ?? "step";
  svg.append(sv("text", { x: L, y: H - 6, "font-size": "10", fill: "#5c6670" }, xl + " " + x0), sv("text", { x: W - R, y: H - 6, "text-anchor": "end", "font-size": "10", fill: "#5c6670" }, xl + " " + x1));
  const legend = el("div", { class: "legend" });
  for (const s of series) {
    const p = s.points.filter(q => q[1] !== null && (!opts.log || q[1] > 0));
    if (!p.length) continue;
    if (s.marks) { for (const q of p) svg.append(sv("circle", { cx: X(q[0]), cy: Y(q[1]), r: 3, fill: s.color })); }
    else svg.append(sv("polyline", { points: p.map(q => `${X(q[0]).toFixed(1)},${Y(q[1]).toFixed(1)}`).join(" "), fill: "none", stroke: s.color, "stroke-width": 1.6 }));
    legend.append(el("span", {}, el("span", { class: "swatch", style: `background:${s.color}` }), s.name));
  }
  box.append(svg, legend);
  return box;
}
function renderTraining() {
  const box = clear(document.getElementById("training-body")), tr = DATA.training.train, va = DATA.training.valid;
  if (!tr.length && !va.length) { box.append(el("p", {}, "No metrics.jsonl in the run directory: nothing to plot.")); return; }
  const charts = el("div", { class: "charts" });
  charts.append(chart("loss (cross-entropy per target token, log scale)", [
    { name: "train", color: "#2b7bb9", points: tr.map(r => [r.step, r.loss]) },
    { name: "validation", color: "#e67e22", points: va.map(r => [r.step, r.loss]) }], { log: true }));
  const metric = va.length && va[0].bleu !== undefined ? "bleu" : "accuracy";
  charts.append(chart(`validation ${metric === "bleu" ? "BLEU" : "accuracy (%)"}`, [{ name: metric, color: "#2a9d4b", points: va.map(r => [r.step, r[metric] ?? null]) }]));
  charts.append(chart("learning rate", [{ name: "lr", color: "#8e44ad", points: tr.map(r => [r.step, r.lr]) }]));
  const clipped = tr.filter(r => r.clipped);
  charts.append(chart(`global gradient norm (before clipping); ${clipped.length} of ${tr.length} logged steps clipped`, [
    { name: "grad norm", color: "#1d232a", points: tr.map(r => [r.step, r.grad_norm]) },
    { name: "clipped", color: "#c0392b", marks: true, points: clipped.map(r => [r.step, r.grad_norm]) }], { log: true }));
  const modules = [...new Set(tr.flatMap(r => Object.keys(r.grad_norms || {})))];
  const colors = ["#2b7bb9", "#e67e22", "#2a9d4b", "#c0392b", "#8e44ad", "#c99a06", "#4a5560"];
  charts.append(chart("gradient norm per module (log scale)", modules.map((m, k) => ({ name: m, color: colors[k % colors.length], points: tr.map(r => [r.step, r.grad_norms?.[m] ?? null]) })), { log: true }));
  box.append(charts);
}
