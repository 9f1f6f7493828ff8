// ---- 3. beam-search tree ---------------------------------------------------------------------
const STATUS = {
  root: ["#4a5560", "the start symbol"],
  kept: ["#2b7bb9", "kept in the beam and expanded at the next step"],
  finished: ["#2a9d4b", "finished with <eos>"],
  unfinished: ["#c99a06", "live at the length limit: competed as an unfinished hypothesis"],
  abandoned: ["#8c8c8c", "live when the search stopped: no continuation could beat the n-best"],
  pruned: ["#b9c2cb", "fell out of the top K of its step"],
  ngram_blocked: ["#c0392b", "blocked: it would repeat an n-gram"],
  unk_suppressed: ["#8e44ad", "<unk> suppressed"],
  below_min_length: ["#e67e22", "<eos> before the minimum length"],
  not_forced: ["#777777", "not the forced prefix's token"],
};
const STOP = {
  all_finished: "all K slots finished with <eos>",
  cannot_improve: "stopped early: no live hypothesis could still beat the n-best (its log-prob divided by the largest length penalty it could reach is below the n-th finished score)",
  max_length: "stopped at the maximum length: the live hypotheses competed unfinished",
  dead_end: "stopped: no live hypothesis had an allowed continuation",
};
const FADED = new Set(["pruned", "ngram_blocked", "unk_suppressed", "below_min_length", "abandoned", "not_forced"]);
function reason(n, i) {
  const st = n.status[i];
  if (st === "finished") return n.rank[i] ? `finished with <eos>; rank ${n.rank[i]} of the n-best` : "finished with <eos>, but not in the n-best";
  if (st === "unfinished") return STATUS[st][1] + (n.rank[i] ? `; rank ${n.rank[i]} of the n-best` : "; not in the n-best");
  if (st === "pruned") return `fell out of the top K: ${n.step[i] > 0 ? "its running log-prob ranked below the beam's survivors at step " + n.step[i] : ""}`;
  return STATUS[st][1];
}
function renderTree() {
  const box = clear(document.getElementById("tree-body")), s = S[state.sentence];
  if (s.empty) { box.append(el("p", {}, "This input line is empty: there is no tree.")); return; }
  const tr = s.trace, n = tr.nodes, count = n.parent.length;
  const children = Array.from({ length: count }, () => []);
  for (let i = 1; i < count; i++) children[n.parent[i]].push(i);
  for (const c of children) c.sort((a, b) => (n.token_log_prob[b] ?? -1e9) - (n.token_log_prob[a] ?? -1e9));
  const best = new Set();
  for (let i = tr.nbest_nodes[0] ?? -1; i > 0; i = n.parent[i]) best.add(i);
  best.add(0);
  // Layout: x by step; y (a node's centre) by the order of the leaves in a depth-first walk,
  // children by probability; a dropped leaf is drawn on one line and takes less height.
  const W = 132, BW = 108, BH = 31, SMALL = 18, GAP = 5, PAD = 10;
  const small = i => i > 0 && !children[i].length && FADED.has(n.status[i]);
  const y = new Array(count).fill(0);
  let bottom = PAD;
  const stack = [[0, false]];
  while (stack.length) {
    const [i, done] = stack.pop();
    if (done) { const c = children[i]; y[i] = (y[c[0]] + y[c[c.length - 1]]) / 2; continue; }
    if (!children[i].length) { const h = small(i) ? SMALL : BH; y[i] = bottom + h / 2; bottom += h + GAP; continue; }
    stack.push([i, true]);
    for (let k = children[i].length - 1; k >= 0; k--) stack.push([children[i][k], false]);
  }
  const steps = Math.max(...n.step), width = (steps + 1) * W + PAD * 2, height = Math.max(bottom, BH + 2 * PAD) + PAD;
  box.append(el("p", {}, el("b", {}, "source: "), el("span", { class: "text" }, s.source)));
  box.append(el("p", {}, el("b", {}, "stopping reason: "), STOP[tr.stop_reason] ?? tr.stop_reason,
    el("span", { class: "muted" }, ` \u2014 ${tr.steps ?? tr.predicted_ids.length} steps, ${count} nodes, beam ${tr.beam_size}, n-best ${tr.nbest}, max length ${tr.max_length}`)));
  const legend = el("div", { class: "legend" });
  for (const [k, [c, text]] of Object.entries(STATUS))
    legend.append(el("span", { title: text }, el("span", { class: "swatch", style: `background:${c};opacity:${FADED.has(k) ? 0.55 : 1}` }), k.replace(/_/g, " ")));
  legend.append(el("span", { class: "muted" }, "each node: token, then log p(token) | running sum (a dropped leaf: token and log p); faded, dashed: dropped; thick edges: the winning hypothesis; #r: rank in the n-best. Tab, or the arrow keys, move between nodes; hover or focus one for its details"));
  box.append(legend);
  const zoom = state.zoom ?? 1;
  const svg = sv("svg", { width: width * zoom, height: height * zoom, viewBox: `0 0 ${width} ${height}`, id: "tree-svg", role: "group", "aria-label": "beam-search tree" });
  const zoomBar = el("div", { class: "legend" }, "zoom",
    ...[0.5, 0.75, 1].map(z => el("button", { type: "button", "aria-pressed": z === zoom ? "true" : "false",
      onclick: () => { state.zoom = z; renderTree(); writeHash(); selftest(); } }, `${z * 100}%`)));
  box.append(zoomBar);
  const gEdges = sv("g"), gNodes = sv("g");
  const px = i => PAD + n.step[i] * W, cy = i => y[i];
  for (let i = 1; i < count; i++) {
    const p = n.parent[i];
    gEdges.append(sv("path", { d: `M${px(p) + BW},${cy(p)} C${px(p) + BW + 14},${cy(p)} ${px(i) - 14},${cy(i)} ${px(i)},${cy(i)}`,
      fill: "none", stroke: best.has(i) ? "#1d232a" : "#a9b3bc", "stroke-width": best.has(i) ? 2.5 : 1, opacity: FADED.has(n.status[i]) ? 0.5 : 1 }));
  }
  const nodes = [];
  for (let i = 0; i < count; i++) {
    const st = n.status[i], color = STATUS[st]?.[0] ?? "#000", faded = FADED.has(st);
    const label = i === 0 ? "<s>" : tok(n.token[i]);
    const h = small(i) ? SMALL : BH;
    const g = sv("g", { class: "node", tabindex: "0", "data-node": i, transform: `translate(${px(i)},${cy(i) - h / 2})`, opacity: faded ? 0.6 : 1,
      role: "button", "aria-label": `${label}, ${st.replace(/_/g, " ")}${n.rank[i] ? ", rank " + n.rank[i] : ""}` });
    g.append(sv("title", {}, `${label}: ${reason(n, i)}`));
    g.append(sv("rect", { width: BW, height: h, rx: 5, fill: faded ? "#fff" : color, stroke: color, "stroke-width": st === "finished" || st === "unfinished" ? 2.5 : 1.2, "stroke-dasharray": faded ? "4 2" : "none" }));
    const fg = faded ? "#1d232a" : "#fff", short = label.length > 11 ? label.slice(0, 10) + "\u2026" : label;
    if (small(i)) {
      g.append(sv("text", { x: 5, y: 13, fill: fg }, short.length > 7 ? short.slice(0, 6) + "\u2026" : short),
               sv("text", { x: BW - 4, y: 13, fill: fg, "font-size": "10", "text-anchor": "end" }, fmt(n.token_log_prob[i])));
    } else {
      g.append(sv("text", { x: 5, y: 13, fill: fg, "font-weight": "600" }, short));
      if (i > 0) g.append(sv("text", { x: 5, y: 26, fill: fg, "font-size": "10" }, `${fmt(n.token_log_prob[i])} | ${fmt(n.log_prob[i])}`));
      if (n.rank[i]) g.append(sv("text", { x: BW - 4, y: 13, fill: fg, "text-anchor": "end", "font-weight": "700" }, "#" + n.rank[i]));
    }
    g.addEventListener("click", () => details(i));
    g.addEventListener("focus", () => details(i));
    g.addEventListener("keydown", e => treeKey(e, i, children, n));
    gNodes.append(g); nodes.push(g);
  }
  svg.append(gEdges, gNodes);
  const wrap = el("div", { class: "tree-wrap" }, el("div", { class: "scroll", style: "max-height:75vh" }, svg), el("div", { id: "tree-details" }));
  box.append(wrap);
  const current = state.node >= 0 && state.node < count ? state.node : (tr.nbest_nodes[0] ?? 0);
  details(current);
  // Scroll the tree so that the current node (the winner, at first) is in view.
  scrollTree = () => {
    const scroller = wrap.firstChild;
    scroller.scrollTop = Math.max(0, cy(current) * zoom - scroller.clientHeight / 2);
    scroller.scrollLeft = Math.max(0, (px(current) + BW + 2 * PAD) * zoom - scroller.clientWidth);
  };
  scrollTree();
}
let scrollTree = () => {};
function treeKey(e, i, children, n) {
  let j = -1;
  if (e.key === "ArrowLeft" && i > 0) j = n.parent[i];
  else if (e.key === "ArrowRight" && children[i].length) j = children[i][0];
  else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    const sib = i > 0 ? children[n.parent[i]] : [0], k = sib.indexOf(i) + (e.key === "ArrowDown" ? 1 : -1);
    if (k >= 0 && k < sib.length) j = sib[k];
  }
  if (j >= 0) { e.preventDefault(); document.getElementById("tree-svg").querySelector(`g.node[data-node="${j}"]`).focus(); }
}
function details(i) {
  const s = S[state.sentence], n = s.trace.nodes, box = clear(document.getElementById("tree-details"));
  state.node = i;
  for (const g of document.querySelectorAll("#tree-svg g.node.current")) g.classList.remove("current");
  document.querySelector(`#tree-svg g.node[data-node="${i}"]`)?.classList.add("current");
  const prefix = [];
  for (let k = i; k > 0; k = n.parent[k]) prefix.unshift(tok(n.token[k]));
  box.append(el("div", {}, el("b", {}, i === 0 ? "the start symbol <s>" : `step ${n.step[i]}: "${tok(n.token[i])}"`)));
  box.append(el("div", { class: "text muted" }, "prefix: " + (prefix.join(" ") || "(empty)")));
  const rows = [["what happened", reason(n, i)]];
  if (i > 0) {
    rows.push(["log p(token)", `${fmt(n.token_log_prob[i], 4)}  (p = ${prob(n.token_log_prob[i])})`],
              ["running sum L", fmt(n.log_prob[i], 4)],
              ["length penalty lp(" + n.step[i] + ")", fmt(n.length_penalty[i], 4)],
              ["L / lp", fmt(n.score[i] - (n.coverage ? n.coverage[i] : 0), 4)]);
    if (n.coverage && n.coverage[i]) rows.push(["coverage penalty", fmt(n.coverage[i], 4)]);
    rows.push(["score (ranks finished)", fmt(n.score[i], 4)]);
  }
  box.append(el("table", {}, el("tbody", {}, ...rows.map(([k, v]) => el("tr", {}, el("td", { class: "muted" }, k), el("td", {}, v))))));
  const kids = [];
  for (let k = 1; k < n.parent.length; k++) if (n.parent[k] === i) kids.push(k);
  kids.sort((a, b) => (n.token_log_prob[b] ?? -1e9) - (n.token_log_prob[a] ?? -1e9));
  if (kids.length) {
    box.append(el("h3", {}, "top next tokens"));
    box.append(el("table", { class: "plain" }, el("tbody", {}, ...kids.slice(0, 5).map(k =>
      el("tr", {}, el("td", {}, tok(n.token[k])), el("td", {}, "p = " + prob(n.token_log_prob[k])), el("td", { class: "muted" }, n.status[k].replace(/_/g, " ")))))));
  }
  if (S[state.sentence].trace.nodes.length_penalty && i > 0)
    box.append(el("p", { class: "muted" }, "Selection compares running sums L of one step (same length, so dividing by lp changes nothing); finished hypotheses of different lengths are ranked by score = L / lp + coverage."));
}
