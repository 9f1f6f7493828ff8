// ---- 2d. the recorded graph (the tape) of this sentence's loss -------------------------------
// Every node the engine recorded for the teacher-forced loss (apps/explore/explore_tape.h): op,
// output shape, ‖value‖ and ‖gradient‖ after backward, grouped by module and time step. Groups
// are collapsed and their rows are built only when opened, so a long sentence stays quick.
document.head.append(el("style", {}, `
  .tape-wrap { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 12px; }
  #tape-details { border: 1px solid var(--line); border-radius: 4px; padding: 8px; font-size: 13px; align-self: start; position: sticky; top: 8px; }
  #tape-groups details { border-bottom: 1px solid var(--line); }
  #tape-groups summary { cursor: pointer; padding: 2px 4px; font-size: 13px; }
  #tape-groups table td, #tape-groups table th { padding: 1px 6px; font-size: 12.5px; text-align: left; }
  #tape-groups td.num { text-align: right; font-variant-numeric: tabular-nums; }
  #tape-groups tr.chosen { background: #fff3cf; }
  .tape-op { font: inherit; font-family: ui-monospace, monospace; background: none; border: none; padding: 0; cursor: pointer; color: var(--accent); }
  .tape-ref { font: inherit; font-size: 11.5px; background: #eef2f6; border: none; border-radius: 3px; padding: 0 3px; margin: 0 1px; cursor: pointer; }
  .path-att { box-shadow: inset 4px 0 0 #2b7bb9; }
  .path-rec { box-shadow: inset -4px 0 0 #e67e22; }
  .path-att.path-rec { box-shadow: inset 4px 0 0 #2b7bb9, inset -4px 0 0 #e67e22; }
  .mark { display: inline-block; font-size: 11px; padding: 0 5px; border-radius: 8px; margin-left: 4px; color: #fff; }
  .mark.att { background: #2b7bb9; } .mark.rec { background: #e67e22; }
  #tape-details pre { white-space: pre-wrap; font-size: 11.5px; }
`));

function tapeGroupLabel(s, tape, g) {
  const src = i => s.source_tokens[i] ?? "", tgt = i => (tape.target_tokens || [])[i] ?? "";
  const quoted = t => el("span", {}, "\u201c", tokenEl(t), "\u201d");
  if (tape.kind === "transformer") {  // a Transformer's groups are layers, not time steps
    // each stack's final norm is the step after its last layer: the largest step of its module
    const last = Math.max(...tape.groups.filter(x => x.module === g.module).map(x => x.step));
    const layer = g.step === last ? "the stack's final norm" : `layer ${g.step}`;
    if (g.module === "encoder" && g.step >= 0) return el("span", {}, `encoder ${layer}: every source position at once`);
    if (g.module === "encoder") return el("span", {}, "encoder: the source embeddings \u00d7 \u221ad + positions");
    if (g.module === "decoder" && g.step >= 0) return el("span", {}, `decoder ${layer}: causal self-attention and feed-forward, every target position at once`);
    if (g.module === "decoder") return el("span", {}, "decoder: the target embeddings \u00d7 \u221ad + positions");
    if (g.module === "attention") return el("span", {}, `cross-attention of decoder layer ${g.step}: the memory's keys and values, and the queries`);
  }
  if (g.module === "encoder" && g.step >= 0) return el("span", {}, `encoder step ${g.step + 1}: reads `, quoted(src(g.step)));
  if (g.module === "encoder") return el("span", {}, "encoder: the embeddings, what all steps share, the decoder's initial state");
  if (g.module === "attention" && g.step >= 0) return el("span", {}, `attention at step ${g.step + 1}`);
  if (g.module === "attention") return el("span", {}, "attention: the keys, projected once per sentence");
  if (g.module === "decoder" && g.step >= 0)
    return el("span", {}, `decoder step ${g.step + 1}: predicts `, quoted(tgt(g.step)));
  if (g.module === "output") return el("span", {}, "output: every step's state, the projection to the vocabulary");
  if (g.module === "loss") return el("span", {}, "loss: the mean cross-entropy");
  if (g.module === "parameters") return el("span", {}, "parameters (leaves: their gradients are what training uses)");
  return el("span", {}, `${g.module}${g.step >= 0 ? " step " + (g.step + 1) : ""}`);
}

const tapeState = { chosen: -1, path: null, node: -1 };  // path, node: from the URL
function renderTape() {
  const box = clear(document.getElementById("tape-body")), s = S[state.sentence];
  tapeState.chosen = -1;
  if (s.empty) { box.append(el("p", {}, "This input line is empty: there is nothing to translate.")); return; }
  const tape = s.tape, g = META.gradients || {};
  if (!tape) {
    box.append(el("p", {}, g.enabled === false ? notComputed("tape")
      : `The tape is in this file for the first ${g.tape_sentences ?? 0} sentences only (each holds every node of the sentence's graph): seqgrad explore --tape-sentences N records it for more.`));
    return;
  }
  const n = tape.nodes, count = n.op.length, maths = g.tape_maths || {};
  const onAtt = new Set(tape.paths.attention || []), onRec = new Set(tape.paths.recurrence || []);
  box.append(el("p", { class: "muted" },
    `The graph the engine recorded for this sentence's teacher-forced loss against ${tape.target === "reference" ? "its reference" : "the beam's best hypothesis (no reference)"} ` +
    `(L = ${fmt(tape.loss, 4)}): ${count} nodes, each an op's output (or a parameter), in the order backward visits them reversed: inputs first. ` +
    `\u2016value\u2016 and \u2016grad\u2016 are the L2 norms of the node's output and of \u2202L/\u2202(that output) after one backward pass. ` +
    `Choose an op to see its maths and backward rule, as written above it in autograd/.`));
  const transformer = tape.kind === "transformer";
  box.append(el("div", { class: "legend" }, transformer
    ? el("span", {}, el("span", { class: "swatch", style: "background:#2b7bb9" }), `the path from the loss through the cross-attention (the memory) to the source embeddings (${onAtt.size} nodes): a Transformer has no recurrence, so this is its only route to the source`)
    : el("span", {}, el("span", { class: "swatch", style: "background:#2b7bb9" }), `the path from the loss to the first source embedding through attention (${onAtt.size} nodes)`),
    transformer ? "" : el("span", {}, el("span", { class: "swatch", style: "background:#e67e22" }), `through the recurrence (${onRec.size} nodes)`)));
  if (!onAtt.size) box.append(el("p", { class: "muted" }, "No path through attention: this model has no attention, so the gradient reaches the encoder through the recurrence only."));

  // members of every group, in tape order
  const members = tape.groups.map(() => []);
  n.group.forEach((gi, i) => members[gi].push(i));
  const users = Array.from({ length: count }, () => []);
  n.inputs.forEach((ins, i) => ins.forEach(j => users[j].push(i)));
  const list = el("div", { id: "tape-groups" }), details = [];
  const fill = gi => {
    const d = details[gi];
    if (d.dataset.filled) return;
    d.dataset.filled = "1";
    const t = el("table", { class: "plain" }, el("thead", {}, el("tr", {}, ...["#", "op", "shape", "\u2016value\u2016", "\u2016grad\u2016", "inputs"].map(x => el("th", {}, x)))));
    const tb = el("tbody");
    for (const i of members[gi]) {
      const op = tape.ops[n.op[i]], name = tape.names[i];
      const cls = (onAtt.has(i) ? "path-att " : "") + (onRec.has(i) ? "path-rec" : "");
      tb.append(el("tr", { class: cls.trim(), id: "tape-node-" + i },
        el("td", { class: "num" }, i),
        el("td", {}, el("button", { type: "button", class: "tape-op", onclick: () => chooseTapeNode(i) }, name ? `${op} ${name}` : op)),
        el("td", {}, "[" + n.shape[i].join(",") + "]"),
        el("td", { class: "num" }, n.value[i] === null ? "\u2013" : Number(n.value[i]).toPrecision(3)),
        el("td", { class: "num" }, n.grad[i] === null ? "(kept by a kernel)" : Number(n.grad[i]).toPrecision(3)),
        el("td", {}, ...n.inputs[i].map(j => el("button", { type: "button", class: "tape-ref", onclick: () => chooseTapeNode(j) }, "#" + j)))));
    }
    t.append(tb);
    d.append(el("div", { class: "scroll" }, t));
  };
  tape.groups.forEach((grp, gi) => {
    const m = members[gi], att = m.filter(i => onAtt.has(i)).length, rec = m.filter(i => onRec.has(i)).length;
    const d = el("details", { "data-group": gi },
      el("summary", {}, tapeGroupLabel(s, tape, grp), el("span", { class: "muted" }, ` \u2014 ${m.length} node${m.length === 1 ? "" : "s"}`),
         att ? el("span", { class: "mark att", title: "nodes on the path through attention" }, att) : null,
         rec ? el("span", { class: "mark rec", title: "nodes on the path through the recurrence" }, rec) : null));
    d.addEventListener("toggle", () => { if (d.open) fill(gi); selftest(); });
    details.push(d);
    list.append(d);
  });
  const openPath = set => { for (const [gi, m] of members.entries()) if (m.some(i => set.has(i))) { details[gi].open = true; fill(gi); } selftest(); };
  box.append(el("p", {},
    el("button", { type: "button", id: "tape-open-att", onclick: () => openPath(onAtt) }, "open the groups on the path through attention"), " ",
    transformer ? "" : el("button", { type: "button", id: "tape-open-rec", onclick: () => openPath(onRec) }, "open the groups on the path through the recurrence"), " ",
    el("button", { type: "button", onclick: () => { details.forEach(d => { d.open = false; }); selftest(); } }, "collapse all")));
  box.append(el("div", { class: "tape-wrap" }, list, el("div", { id: "tape-details" }, el("p", { class: "muted" }, "Choose an op."))));
  // #...&view=tape&path=attention|recurrence opens that path's groups, &node=N chooses node N
  if (tapeState.path === "attention") openPath(onAtt); else if (tapeState.path === "recurrence") openPath(onRec);
  if (tapeState.node >= 0 && tapeState.node < count) chooseTapeNode(tapeState.node);

  function chooseTapeNode(i) {
    const gi = n.group[i], d = details[gi];
    d.open = true; fill(gi);
    document.querySelectorAll("#tape-groups tr.chosen").forEach(r => r.classList.remove("chosen"));
    const row = document.getElementById("tape-node-" + i);
    if (row) { row.classList.add("chosen"); row.scrollIntoView({ block: "nearest" }); }
    tapeState.chosen = i;
    const op = tape.ops[n.op[i]], panel = clear(document.getElementById("tape-details"));
    const refs = js => js.length ? js.map(j => el("button", { type: "button", class: "tape-ref", onclick: () => chooseTapeNode(j) }, `#${j} ${tape.ops[n.op[j]]}`)) : ["\u2013"];
    const rows = [["node", `#${i}`], ["op", tape.names[i] ? `${op} (${tape.names[i]})` : op], ["group", tapeGroupLabel(s, tape, tape.groups[gi])],
                  ["shape", "[" + n.shape[i].join(", ") + "]"], ["\u2016value\u2016", n.value[i] ?? "\u2013"],
                  ["\u2016\u2202L/\u2202value\u2016", n.grad[i] === null ? "kept by a kernel below the seam (not in .grad)" : n.grad[i]],
                  ["inputs", el("span", {}, ...refs(n.inputs[i]))], ["used by", el("span", {}, ...refs(users[i]))],
                  ["paths", [onAtt.has(i) ? "through attention" : null, onRec.has(i) ? "through the recurrence" : null].filter(x => x).join(", ") || "\u2013"]];
    panel.append(el("table", {}, el("tbody", {}, ...rows.map(([k, v]) => el("tr", {}, el("td", { class: "muted" }, k), el("td", {}, v))))));
    const m = maths[op];
    if (m) {
      panel.append(el("h3", {}, "maths and backward rule"));
      for (const [file, text] of m) panel.append(el("div", { class: "muted" }, file), el("pre", { class: "tape-maths" }, text));
    } else {
      panel.append(el("p", { class: "muted" }, n.inputs[i].length ? "No maths line for this op." : "A leaf: no op made it, so no backward rule; its gradient accumulates into .grad."));
    }
    selftest();
  }
}

HASH_FIELDS.push({
  read(p) {
    tapeState.path = p.get("path");
    tapeState.node = p.has("node") ? parseInt(p.get("node"), 10) : -1;
  },
  write: () => (tapeState.path ? `&path=${tapeState.path}` : "") + (tapeState.node >= 0 ? `&node=${tapeState.node}` : ""),
});

addView("tape", "Tape", "The recorded graph (the tape)", {
  render: renderTape, before: "tree",
  selftest: () => {
    const s = S[state.sentence], tape = !s.empty && s.tape;
    const maths = (META.gradients || {}).tape_maths || {};
    return {
      tape_nodes: tape ? tape.nodes.op.length : 0,
      tape_groups: document.querySelectorAll("#tape-groups details").length,
      tape_open_groups: document.querySelectorAll("#tape-groups details[open]").length,
      tape_rows: document.querySelectorAll("#tape-groups tbody tr").length,
      tape_ops_without_maths: tape ? tape.ops.filter(op => op !== "parameter" && !maths[op]) : [],
      tape_path_nodes: tape ? [tape.paths.attention.length, tape.paths.recurrence.length] : [0, 0],
    };
  },
});
