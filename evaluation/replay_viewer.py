"""The replay viewer's page: HTML, CSS and JavaScript, inlined by
:func:`~uno_mk_env.evaluation.replay_page.replay_html` (no file or network access at run
time), which :func:`~uno_mk_env.evaluation.replay_page.write_html` writes and
:class:`~uno_mk_env.evaluation.replay_page.ReplayFrame` shows in a notebook.

The JavaScript draws a table dict (:func:`uno_mk_env.render.table.table_data`) as SVG with the
image renderer's geometry and palette (passed in as ``uno-constants``), shape for shape as
:func:`uno_mk_env.render.image.draw_table` draws it with Pillow. A seat's view reads only
``steps[i].seats[seat]``; the spectator's only ``steps[i].spectator``. One difference: the
latest decision's events (the image's ``last:`` line, cut to the felt's width there) are the
HTML line ``#last-line`` under the table, in full, wrapped to the page's width.

Test hooks (read by ``tests/test_replay_browser.py``): ``#table`` carries ``data-game``,
``data-step``, ``data-view``, ``data-current-player``, ``data-phase``, ``data-top-card``,
``data-active-colour``, ``data-direction`` and ``data-draw-pile``; each seat panel is a
``g.seat`` with ``data-seat``, ``data-hand-size`` and ``data-uno``, holding one ``g.card``
per card drawn (``data-code`` on a face-up card, class ``back`` on a hidden one); the legal
actions are ``#legal li`` with ``data-action`` (class ``chosen`` on the chosen one);
``#last-line`` holds the ``last:`` line.
"""

from __future__ import annotations

__all__ = ["CSS", "DRAW_JS", "JS", "PAGE"]

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{TITLE}}</title>
<style>{{CSS}}</style>
</head>
<body>
<header>
  <h1 id="title"></h1>
  <div id="result"></div>
</header>
<nav id="controls">
  <label>game <select id="game"></select></label>
  <label>view <select id="view"></select></label>
  <button id="first" title="first decision (Home)">&laquo; first</button>
  <button id="prev" title="previous decision (left arrow)">&lsaquo; prev</button>
  <button id="play" title="play / pause (space)">play</button>
  <button id="next" title="next decision (right arrow)">next &rsaquo;</button>
  <button id="last" title="last decision (End)">last &raquo;</button>
  <input id="slider" type="range" min="0" max="0" value="0" aria-label="decision">
  <span id="counter"></span>
</nav>
<main>
  <div id="board"><svg id="table" xmlns="http://www.w3.org/2000/svg"></svg>
    <p id="last-line"></p></div>
  <aside>
    <section>
      <h2 id="decision-title"></h2>
      <ul id="legal"></ul>
      <p id="events"></p>
    </section>
    <section>
      <h2>event log</h2>
      <ol id="log"></ol>
    </section>
  </aside>
</main>
<footer>Arrow keys step through the decisions; Home/End jump to the first/last; space plays.
Each seat's view shows only what that seat may know.</footer>
<script type="application/json" id="uno-constants">{{CONSTANTS}}</script>
<script type="application/json" id="replay-data">{{DATA}}</script>
<script>{{JS}}</script>
</body>
</html>
"""

CSS = """
:root { color-scheme: dark; }
* { box-sizing: border-box; }
body { margin: 0; background: #17202a; color: #f4f1e8;
       font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
header { padding: 8px 16px 0; }
h1 { font-size: 18px; margin: 4px 0; font-weight: 600; }
#result { font-size: 13px; color: #b8c0cc; }
#controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 8px 16px; }
#controls label { font-size: 13px; color: #b8c0cc; }
select, button { background: #2a3441; color: #f4f1e8; border: 1px solid #4a5563;
                 border-radius: 6px; padding: 4px 10px; font-size: 14px; }
button:hover { background: #354152; }
button:focus-visible, select:focus-visible, input:focus-visible { outline: 2px solid #ffb300; }
#slider { flex: 1; min-width: 200px; accent-color: #ffb300; }
#counter { font-variant-numeric: tabular-nums; font-size: 13px; min-width: 110px; }
main { display: flex; gap: 12px; padding: 0 16px 8px; align-items: flex-start; }
#board { flex: 1; min-width: 0; }
#last-line { font-size: 13px; color: #c9d1db; margin: 6px 4px 0; min-height: 1.2em;
        overflow-wrap: anywhere; }
#table { width: 100%; height: auto; display: block; border-radius: 8px;
         font-family: Helvetica, Arial, sans-serif; }
aside { width: 360px; flex: none; display: flex; flex-direction: column; gap: 10px; }
section { background: #212b36; border-radius: 8px; padding: 8px 12px; }
h2 { font-size: 14px; margin: 4px 0 8px; font-weight: 600; }
#legal { list-style: none; margin: 0; padding: 0; font-size: 13px; }
#legal li { position: relative; padding: 3px 6px; margin: 2px 0; border-radius: 4px;
            background: #2a3441; overflow: hidden; }
#legal li .bar { position: absolute; left: 0; top: 0; bottom: 0; background: #3b5b7a;
                 z-index: 0; }
#legal li span { position: relative; z-index: 1; }
#legal li .p { float: right; font-variant-numeric: tabular-nums; }
#legal li.chosen { outline: 2px solid #ffb300; font-weight: 700; }
#legal li.note { background: none; color: #b8c0cc; padding-left: 0; }
#events { font-size: 13px; margin: 8px 0 4px; color: #ffe08a; min-height: 1.2em; }
#log { font-size: 12px; max-height: 360px; overflow-y: auto; margin: 0; padding-left: 42px;
       color: #c9d1db; position: relative; }
#log li { padding: 1px 2px; cursor: pointer; }
#log li.current { background: #3a3220; color: #ffe08a; }
footer { font-size: 12px; color: #8a94a3; padding: 4px 16px 12px; }
/* narrow windows: the table above the panels, both the full width (stretch: a column flex
   item with align-items: flex-start would shrink the table to its intrinsic 300 px) */
@media (max-width: 1100px) { main { flex-direction: column; align-items: stretch; }
                             aside { width: 100%; } }
"""

DRAW_JS = r"""
"use strict";
// How the table and a card look, as the image renderer draws them (one home: the replay
// page inlines this, the browser table of uno_mk_env.serve loads it as a module).
// C: the constants (geometry, palette, names) of replay.viewer_constants().
function unoDrawing(C) {
  const G = C.geometry, P = C.palette, NS = "http://www.w3.org/2000/svg";
  // ------------------------------------------------------------------ primitives
  function node(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function rect(g, x, y, w, h, r, fill, edge, width) {
    return node("rect", { x: x, y: y, width: w, height: h, rx: r, fill: fill || "none",
      stroke: edge || "none", "stroke-width": edge ? (width || 1) : 0 }, g);
  }
  function ellipse(g, cx, cy, rx, ry, fill, edge, width) {
    return node("ellipse", { cx: cx, cy: cy, rx: rx, ry: ry, fill: fill || "none",
      stroke: edge || "none", "stroke-width": edge ? (width || 1) : 0 }, g);
  }
  const pts = (points) => points.map((p) => p[0] + "," + p[1]).join(" ");
  function polygon(g, points, fill) {
    return node("polygon", { points: pts(points), fill: fill }, g);
  }
  function polyline(g, points, colour, width) {
    return node("polyline", { points: pts(points), fill: "none", stroke: colour,
      "stroke-width": width, "stroke-linejoin": "round", "stroke-linecap": "round" }, g);
  }
  const ANCHOR = { l: "start", m: "middle", r: "end" };
  function text(g, x, y, str, size, colour, anchor, bold) {
    anchor = anchor || "la";
    const e = node("text", { x: x, y: y, fill: colour, "font-size": size,
      "text-anchor": ANCHOR[anchor[0]],
      "dominant-baseline": anchor[1] === "m" ? "central" : "hanging" }, g);
    if (bold) e.setAttribute("font-weight", "bold");
    e.textContent = str;
    return e;
  }
  const cut = (s, n) => (s.length <= n ? s : s.slice(0, n - 1) + "\u2026");

  // ------------------------------------------------------------------ geometry (as Python)
  function seatCentres(n, bottom) {
    const [cx, cy] = G.centre, [rx, ry] = G.radii, out = [];
    for (let s = 0; s < n; s++) {
      const a = 2 * Math.PI * (((s - bottom) % n + n) % n) / n;
      out.push([Math.floor(cx - rx * Math.sin(a) + 0.5), Math.floor(cy + ry * Math.cos(a) + 0.5)]);
    }
    return out;
  }
  function handSlots(count) {
    const [x0, y0, width] = G.hand_area, [cw, ch] = G.card;
    const shown = Math.min(count, G.max_shown), hidden = count - shown;
    if (shown === 0) return [[], 0];
    const rows = shown <= G.one_row_max ? 1 : 2;
    const perRow = Math.ceil(shown / rows);
    const step = perRow === 1 ? cw + 2 : Math.min(cw + 2, (width - cw) / (perRow - 1));
    const slots = [];
    for (let i = 0; i < shown; i++) {
      slots.push([Math.floor(x0 + (i % perRow) * step + 0.5),
                  y0 + Math.floor(i / perRow) * (ch + G.row_gap)]);
    }
    return [slots, hidden];
  }
  function arrowPoints(clockwise, cx, cy, r) {
    let line = [];
    for (let a = 200; a <= 480; a += 10) {
      line.push([cx + r * Math.cos(a * Math.PI / 180), cy + r * Math.sin(a * Math.PI / 180)]);
    }
    if (!clockwise) line = line.map((p) => [2 * cx - p[0], p[1]]);
    const [x1, y1] = line[line.length - 2], [x2, y2] = line[line.length - 1];
    const len = Math.hypot(x2 - x1, y2 - y1) || 1, ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    const head = [[x2 + ux * 9, y2 + uy * 9], [x2 - uy * 7, y2 + ux * 7],
                  [x2 + uy * 7, y2 - ux * 7]];
    const r1 = (p) => [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10];
    return [line.map(r1), head.map(r1)];
  }

  // ------------------------------------------------------------------ texts (as Python)
  function cardLabel(code) {
    if (code === "W4") return "+4";
    if (code === "WB") return "?";
    const labels = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2"];
    return labels["0123456789SRD".indexOf(code[1])];
  }
  const itemOf = (code) => (code === "W4" || code === "WB" ? 4 : C.colours.indexOf(code[0]));
  function statusText(t) {
    if (t.game_over) {
      return t.winner === null ? "Game over: no winner"
        : "Game over: " + t.names[t.winner] + " wins";
    }
    let s = t.names[t.current_player] + " decides: " + t.phase;
    if (t.drawn_card !== null) s += " (drew " + t.drawn_card + ")";
    return s;
  }
  function headerText(t) {
    const view = t.viewer === null ? "spectator view" : t.names[t.viewer] + "'s view";
    return "Round " + t.round + " \u00b7 decision " + t.decision + " \u00b7 " + view;
  }
  function itemLines(t) {
    const it = t.item;
    if (it === null) return ["No item fired this round", ""];
    const who = it.seat === null ? "" : " (" + t.names[it.seat] + ")";
    return [it.item + who + ": " + it.effect, it.events];
  }

  // ------------------------------------------------------------------ drawing (as Python)
  function itemIcon(g, item, cx, cy, s) {
    ellipse(g, cx, cy, s / 2, s / 2, "#ffffff");
    const k = s / 20;
    if (item === 0) {
      rect(g, cx - 3 * k, cy, 6 * k, 6 * k, 1, "#f0d9b5");
      polygon(g, [[cx - 8 * k, cy + k], [cx - 7 * k, cy - 4 * k], [cx - 3 * k, cy - 7 * k],
                  [cx + 3 * k, cy - 7 * k], [cx + 7 * k, cy - 4 * k], [cx + 8 * k, cy + k]], P.R);
      ellipse(g, cx - 3 * k, cy - 3 * k, 1.6 * k, 1.6 * k, "#ffffff");
      ellipse(g, cx + 3 * k, cy - 3 * k, 1.6 * k, 1.6 * k, "#ffffff");
    } else if (item === 1) {
      polygon(g, [[cx - 7 * k, cy - 5 * k], [cx - 3 * k, cy + 4 * k], [cx + 4 * k, cy + 6 * k],
                  [cx + 8 * k, cy + 3 * k], [cx + 2 * k, cy + 2 * k], [cx - 3 * k, cy - 2 * k],
                  [cx - 5 * k, cy - 7 * k]], "#e0b000");
    } else if (item === 2) {
      ellipse(g, cx, cy, 7 * k, 7 * k, P.G, "#ffffff", Math.max(1, Math.round(k)));
      ellipse(g, cx, cy, 3 * k, 3 * k, "#bfe8c9");
    } else if (item === 3) {
      polygon(g, [[cx + 2 * k, cy - 8 * k], [cx - 5 * k, cy + k], [cx - 0.5 * k, cy + k],
                  [cx - 2 * k, cy + 8 * k], [cx + 5 * k, cy - k], [cx + 0.5 * k, cy - k]],
              "#1f6fd1");
    } else {
      ellipse(g, cx - k, cy + 1.5 * k, 6 * k, 6 * k, "#202020");
      polyline(g, [[cx + 3 * k, cy - 3 * k], [cx + 6 * k, cy - 6 * k]], "#8a6d3b",
               Math.max(1, Math.round(k)));
      ellipse(g, cx + 6.5 * k, cy - 6.5 * k, 1.8 * k, 1.8 * k, "#ff8c00");
    }
  }
  function card(parent, code, x, y, big) {
    const [w, h] = big ? G.big_card : G.card;
    const colour = code === "W4" || code === "WB" ? "W" : code[0];
    const g = node("g", { class: big ? "card top-card" : "card", "data-code": code }, parent);
    node("title", {}, g).textContent = C.card_names[code];
    rect(g, x, y, w, h, big ? 6 : 4, P[colour], P.card_edge, big ? 2 : 1);
    const ink = colour === "Y" ? P.text : "#ffffff", label = cardLabel(code), item = itemOf(code);
    if (big) {
      ellipse(g, x + w / 2, y + 42, 27, 31, colour !== "W" ? "#ffffff" : "#3a3a3a");
      text(g, x + w / 2, y + 42, label, 30, colour !== "W" ? P[colour] : "#ffffff", "mm", true);
      text(g, x + 5, y + 4, label, 12, ink, "la", true);
      itemIcon(g, item, x + w / 2, y + 86, 20);
      text(parent, x + w / 2, y + h + 12, C.card_names[code], 12, P.light_text, "ma");
    } else {
      text(g, x + 3, y + 3, label, 13, ink, "la", true);
      itemIcon(g, item, x + 9, y + h - 10, 14);
    }
  }
  function back(parent, x, y) {
    const [w, h] = G.card;
    const g = node("g", { class: "card back" }, parent);
    rect(g, x, y, w, h, 4, P.back, P.card_edge, 1);
    ellipse(g, x + w / 2, y + h / 2, w / 2 - 5, h / 2 - 9, P.back_mark);
  }
  function seatPanel(svg, t, seat, cx, cy) {
    const [pw, ph] = G.panel, x = cx - Math.floor(pw / 2), y = cy - Math.floor(ph / 2);
    const deciding = seat === t.current_player, hand = t.hands[seat], size = t.hand_sizes[seat];
    const g = node("g", { class: "seat", "data-seat": seat, "data-hand-size": size,
      "data-uno": t.uno_called[seat] ? 1 : 0, "data-hidden": hand === null ? 1 : 0 }, svg);
    let edge = deciding ? P.decider : P.panel_edge, width = deciding ? 4 : 1;
    if (seat === t.viewer) { edge = deciding ? P.decider : P.viewer; width = deciding ? 4 : 3; }
    rect(g, x, y, pw, ph, 10, P.panel, edge, width);
    text(g, x + 10, y + 8, cut(t.names[seat], G.name_chars), 14, P.text, "la");
    text(g, x + pw - 10, y + 8, size + " card" + (size !== 1 ? "s" : ""), 13, P.text, "ra");
    const tags = [];
    if (t.uno_called[seat]) tags.push(["UNO!", P.uno]);
    if (deciding) tags.push([t.phase, "#b07800"]);
    if (seat === t.viewer) tags.push(["you", P.viewer]);
    let tx = x + 10;
    for (const [label, colour] of tags) {
      const tw = label.length * 6.2 + 12;
      rect(g, tx, y + 25, tw, 15, 7, colour);
      text(g, tx + tw / 2, y + 32, label, 11, "#ffffff", "mm");
      tx += tw + 5;
    }
    text(g, x + pw - 10, y + 26, "score " + t.scores[seat], 11, P.muted, "ra");
    const [slots, more] = handSlots(size);
    slots.forEach(([dx, dy], i) => {
      if (hand === null) back(g, x + dx, y + dy); else card(g, hand[i], x + dx, y + dy, false);
    });
    if (more) {
      const [dx, dy] = slots[slots.length - 1], [cw, ch] = G.card;
      rect(g, x + dx, y + dy + ch - 16, cw, 16, 3, P.text);
      text(g, x + dx + cw / 2, y + dy + ch - 8, "+" + more, 11, "#ffffff", "mm");
    }
  }
  function drawTable(svg, t) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", "0 0 " + G.width + " " + G.height);
    const data = { "current-player": t.current_player, phase: t.phase, "top-card": t.top_card,
      "active-colour": t.active_colour, direction: t.direction, "draw-pile": t.draw_pile,
      round: t.round, decision: t.decision };
    for (const k in data) svg.setAttribute("data-" + k, data[k]);
    rect(svg, 0, 0, G.width, G.height, 0, P.background);
    const [cx, cy] = G.centre, [fx, fy] = G.felt_radii;
    ellipse(svg, cx, cy, fx, fy, P.felt, P.felt_edge, 8);
    const centres = seatCentres(t.players, t.viewer === null ? 0 : t.viewer);
    centres.forEach(([sx, sy], seat) => seatPanel(svg, t, seat, sx, sy));
    const [x0, y0, x1] = G.centre_box, mid = (x0 + x1) / 2;
    const light = P.light_text, limit = G.max_chars;
    text(svg, mid, y0 + 4, cut(headerText(t), limit), 13, light, "ma");
    text(svg, mid, y0 + 22, cut(statusText(t), limit), 16, "#ffffff", "ma", true)
      .setAttribute("id", "status");
    const [bw, bh] = G.big_card, pileY = y0 + 52, dx = x0 + 40;
    const pile = node("g", { id: "draw-pile" }, svg);
    rect(pile, dx, pileY, bw, bh, 6, P.back, P.card_edge, 2);
    ellipse(pile, dx + bw / 2, pileY + bh / 2, bw / 2 - 10, bh / 2 - 18, P.back_mark);
    text(pile, dx + bw / 2, pileY + bh / 2, String(t.draw_pile), 22, "#ffffff", "mm", true);
    text(pile, dx + bw / 2, pileY + bh + 12, "draw pile", 12, light, "ma");
    const tx = mid - bw / 2;
    const pending = t.colour_pending === true;  // R3.3: a WB start card's colour is being chosen
    rect(svg, tx - 8, pileY - 8, bw + 16, bh + 16, 10, P[pending ? "W" : t.active_colour],
      "#ffffff", 1).setAttribute("id", "active-colour");
    card(svg, t.top_card, tx, pileY, true);
    const colourName = pending ? "being chosen"
      : C.colour_names[C.colours.indexOf(t.active_colour)];
    text(svg, mid, pileY + bh + 28, "active colour: " + colourName, 12, light, "ma");
    const ax = x1 - 78, ay = pileY + bh / 2 - 6;
    const [line, head] = arrowPoints(t.direction === 1, ax, ay, 30);
    polyline(svg, line, light, 4);
    polygon(svg, head, light);
    text(svg, ax, ay + 46, t.direction === 1 ? "clockwise" : "counter-clockwise", 12, light, "ma");
    text(svg, ax, ay + 62, "discard pile " + t.discard_pile, 11, light, "ma");
    const iy = pileY + bh + 44;
    rect(svg, x0 + 10, iy, x1 - x0 - 20, 52, 8, P.item_box);
    const [first, second] = itemLines(t);
    if (t.item !== null) itemIcon(svg, C.item_names.indexOf(t.item.item), x0 + 36, iy + 26, 36);
    const tx0 = t.item !== null ? x0 + 62 : x0 + 24;
    text(svg, tx0, iy + 9, cut(first, limit - 6), 13, P.text, "la");
    text(svg, tx0, iy + 29, cut(second, limit - 6), 12, P.text, "la");
    // the "last:" line is the HTML line under the table (#last-line, on the replay page), in
    // full: it may be longer than the felt is wide
    const lastLine = document.getElementById("last-line");
    if (lastLine) lastLine.textContent = t.last ? "last: " + t.last : "";
  }

  return { drawTable: drawTable, card: card, back: back, itemIcon: itemIcon };
}
"""

JS = DRAW_JS + r"""
(function () {
  const C = JSON.parse(document.getElementById("uno-constants").textContent);
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const { drawTable } = unoDrawing(C);
  const $ = (id) => document.getElementById(id);
  // step: the position among the steps the view shows (index: their positions in the game)
  const st = { game: 0, step: 0, view: "spectator", index: [], timer: null };

  // ------------------------------------------------------------------ the page
  const game = () => DATA.games[st.game];
  const part = (step) => (st.view === "spectator" ? step.spectator : step.seats[Number(st.view)]);
  const last = () => st.index.length - 1;
  // The steps this view shows: a seat's view skips the hidden steps of other seats (a KEEP,
  // R4.2), as seat_steps() in replay.py does, so it shows only what that seat may know.
  function setView(view) {
    const g = game(), at = st.index.length ? st.index[st.step] : 0;
    st.view = view;
    st.index = [];
    g.steps.forEach((step, i) => {
      if (view === "spectator" || !step.hidden || step.actor === Number(view)) st.index.push(i);
    });
    const r = g.result, steps = g.steps;
    const who = r.winner === null ? "no winner (" + r.end + ")" : "winner: " + g.names[r.winner];
    const decisions = view === "spectator" ? r.decisions  // a seat counts public decisions
      : part(steps[steps.length - 1]).table.decision;
    $("result").textContent = who + " \u00b7 scores " + r.scores.join(", ") + " \u00b7 " +
      decisions + " decisions \u00b7 seed " + g.seed;
    $("slider").max = String(last());
    fillLog();
    let pos = 0;
    while (pos < last() && st.index[pos + 1] <= at) pos++;
    return pos;
  }

  function fillGames() {
    const sel = $("game");
    DATA.games.forEach((g, i) => {
      const o = document.createElement("option");
      o.value = String(i); o.textContent = (i + 1) + ". " + g.title;
      sel.appendChild(o);
    });
    sel.disabled = DATA.games.length < 2;
  }
  function fillViews() {
    const sel = $("view"), g = game();
    sel.textContent = "";
    const add = (value, label) => {
      const o = document.createElement("option");
      o.value = value; o.textContent = label; sel.appendChild(o);
    };
    add("spectator", "spectator (every hand)");
    g.names.forEach((name, s) => add(String(s), name + " (seat " + s + ")"));
    if (st.view !== "spectator" && Number(st.view) >= g.players) st.view = "spectator";
    sel.value = st.view;
  }
  function fillLog() {
    const log = $("log"), g = game();
    log.textContent = "";
    st.index.forEach((k, i) => {
      const step = g.steps[k], li = document.createElement("li");
      li.value = i;
      li.dataset.step = String(i);
      const done = step.actor >= 0 ? g.names[step.actor] + " decided" : "end";
      li.textContent = part(step).events || done;
      li.addEventListener("click", () => show(i));
      log.appendChild(li);
    });
  }
  function showDecision(step, p) {
    const g = game(), legal = $("legal");
    legal.textContent = "";
    legal.removeAttribute("data-chosen");
    if (step.actor < 0) {
      const r = g.result;
      $("decision-title").textContent = "End of the game";
      const li = document.createElement("li");
      li.className = "note";
      li.textContent = r.winner === null ? "No winner (" + r.end + ")"
        : g.names[r.winner] + " wins";
      legal.appendChild(li);
    } else {
      $("decision-title").textContent = "Decision " + p.table.decision + ": " +
        g.names[step.actor] + " (" + step.phase + ")" +
        (step.hidden ? " \u00b7 hidden from the other seats" : "");
      if (!p.legal) {
        const li = document.createElement("li");
        li.className = "note";
        li.textContent = "Only " + g.names[step.actor] + " sees its options.";
        legal.appendChild(li);
      } else {
        legal.dataset.chosen = String(p.action);
        p.legal.forEach(([a, label], i) => {
          const li = document.createElement("li");
          li.dataset.action = String(a);
          if (a === p.action) li.className = "chosen";
          if (p.probs) {
            const bar = document.createElement("div");
            bar.className = "bar";
            bar.style.width = (100 * p.probs[i]).toFixed(1) + "%";
            li.appendChild(bar);
          }
          const s = document.createElement("span");
          s.textContent = label;
          li.appendChild(s);
          if (p.probs) {
            const q = document.createElement("span");
            q.className = "p";
            q.textContent = p.probs[i].toFixed(3);
            li.appendChild(q);
          }
          legal.appendChild(li);
        });
      }
    }
    $("events").textContent = p.events ? "\u2192 " + p.events : "";
  }
  // the log scrolls to the current entry; the page itself never scrolls (a narrow window
  // shows the log below the table, and scrollIntoView would move the table out of sight)
  function scrollLog(cur) {
    const log = $("log");
    if (!cur) return;
    if (cur.offsetTop < log.scrollTop) log.scrollTop = cur.offsetTop;
    const bottom = cur.offsetTop + cur.offsetHeight;
    if (bottom > log.scrollTop + log.clientHeight) log.scrollTop = bottom - log.clientHeight;
  }
  function show(i) {
    const g = game();
    st.step = Math.max(0, Math.min(last(), i));
    const step = g.steps[st.index[st.step]], p = part(step), svg = $("table");
    drawTable(svg, p.table);
    svg.setAttribute("data-game", String(st.game));
    svg.setAttribute("data-step", String(st.step));
    svg.setAttribute("data-view", st.view);
    showDecision(step, p);
    $("slider").value = String(st.step);
    $("counter").textContent = "decision " + st.step + " / " + last();
    for (const li of $("log").children) {
      li.classList.toggle("current", Number(li.dataset.step) === st.step);
    }
    scrollLog($("log").children[st.step]);
    const hash = "#game=" + st.game + "&step=" + st.step + "&view=" + st.view;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }
  function selectGame(i) {
    st.game = i;
    st.index = [];
    $("title").textContent = game().title;
    fillViews();
    setView(st.view);
    show(0);
  }
  function stop() {
    if (st.timer === null) return;
    clearInterval(st.timer);
    st.timer = null;
    $("play").textContent = "play";
  }
  function toggle() {
    if (st.timer !== null) { stop(); return; }
    $("play").textContent = "pause";
    st.timer = setInterval(() => {
      if (st.step >= last()) stop(); else show(st.step + 1);
    }, 700);
  }

  fillGames();
  $("game").addEventListener("change", (e) => { stop(); selectGame(Number(e.target.value)); });
  $("view").addEventListener("change", (e) => { show(setView(e.target.value)); });
  $("first").addEventListener("click", () => { stop(); show(0); });
  $("prev").addEventListener("click", () => { stop(); show(st.step - 1); });
  $("next").addEventListener("click", () => { stop(); show(st.step + 1); });
  $("last").addEventListener("click", () => { stop(); show(last()); });
  $("play").addEventListener("click", toggle);
  $("slider").addEventListener("input", (e) => { stop(); show(Number(e.target.value)); });
  document.addEventListener("keydown", (e) => {
    const tag = e.target && e.target.tagName;
    const slider = tag === "INPUT" && e.target.type === "range";
    if (tag === "SELECT" || slider || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowRight") { stop(); show(st.step + 1); }
    else if (e.key === "ArrowLeft") { stop(); show(st.step - 1); }
    else if (e.key === "Home") { stop(); show(0); }
    else if (e.key === "End") { stop(); show(last()); }
    else if (e.key === " " && tag !== "BUTTON") toggle();
    else return;
    e.preventDefault();
  });
  // a link may name a game, a decision and a view: replay.html#game=0&step=12&view=1
  function applyHash() {
    const want = new URLSearchParams(location.hash.slice(1));
    const wanted = (key, top) => {
      const v = Number(want.get(key));
      return Number.isInteger(v) && v >= 0 && v < top ? v : 0;
    };
    stop();
    st.view = "spectator";
    selectGame(wanted("game", DATA.games.length));
    $("game").value = String(st.game);
    if (want.get("view") !== null && want.get("view") !== "spectator") {
      setView(String(wanted("view", game().players)));
      $("view").value = st.view;
    }
    show(wanted("step", last() + 1));
  }
  window.addEventListener("hashchange", applyHash);
  applyHash();
})();
"""
