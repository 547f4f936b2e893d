// The browser table: draws the frames the server sends and sends the person's decisions.
// Everything shown comes from the frames (built from this seat's view only); nothing is dealt
// or decided here.
import { CONSTANTS as C, unoDrawing } from "/static/draw.js";

const { drawTable, card } = unoDrawing(C);
const $ = (id) => document.getElementById(id);
const CODES = C.codes;  // card codes in kind id order (an action below 54 plays that kind)
const NS = "http://www.w3.org/2000/svg";
const token = location.pathname.split("/").pop();
const capture = location.hash.includes("capture");
window.unoFrames = [];  // every frame received, when the address ends in #capture (tests)
let socket = null, frame = null, retry = 0;

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}
function act(action) {
  if (frame) send({ type: "act", ask: frame.ask, action: action });
}

function handCard(code, action) {
  const [w, h] = C.geometry.big_card;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  card(svg, code, 0, 0, true);
  // the big card's name line falls outside the viewBox: the title tooltip names it instead
  if (action === null) {
    const span = document.createElement("span");
    span.className = "card-face" + (frame.legal.length ? " dim" : "");
    span.dataset.code = code;
    span.appendChild(svg);
    return span;
  }
  const b = document.createElement("button");
  b.type = "button";
  b.className = "card-face playable";
  b.dataset.code = code;
  b.dataset.action = String(action);
  b.setAttribute("aria-label", "play " + C.card_names[code]);
  b.appendChild(svg);
  b.addEventListener("click", () => act(action));
  return b;
}

function button(action, label) {
  const b = document.createElement("button");
  b.type = "button";
  b.dataset.action = String(action);
  const colour = label.match(/^name (Red|Yellow|Green|Blue)$/);
  if (colour) { b.className = "colour colour-" + colour[1][0]; b.textContent = colour[1]; }
  else {
    if (label === "call UNO") b.className = "uno";
    b.textContent = label.charAt(0).toUpperCase() + label.slice(1);
  }
  b.addEventListener("click", () => act(action));
  return b;
}

function prompt(t, legal) {
  if (t.game_over) return "Game over";
  if (frame.seat === null) return "Watching: " + t.names[t.current_player] + " decides";
  if (!legal.length) return "Waiting for " + t.names[t.current_player] + "…";
  const what = {
    play: "Your turn: play a card or draw", play_drawn: "You drew " + t.drawn_card +
      ": play it or keep it", choose_colour: "Name the colour",
    choose_target: "Green Shell: choose its target", challenge: "A Wild Draw Four hit you: " +
      "challenge it or accept", uno_catch: "A missed UNO: catch it or let it pass",
  };
  return what[t.phase] || "Your decision (" + t.phase + ")";
}

function show(f) {
  frame = f;
  const t = f.table, svg = $("table");
  drawTable(svg, t);
  document.body.dataset.state = f.over ? "over" : (f.legal.length ? "deciding" : "waiting");
  document.body.dataset.phase = t.phase;
  document.body.dataset.ask = String(f.ask);
  document.body.dataset.decision = String(t.decision);
  $("who").textContent = f.seat === null ? "spectator (no hand is shown)"
    : "you are " + t.names[f.seat];
  $("prompt").textContent = prompt(t, f.legal);
  const plays = new Map(), others = [];
  for (const [a, label] of f.legal) {
    if (a < CODES.length) plays.set(CODES[a], a); else others.push([a, label]);
  }
  const hand = $("hand");
  hand.textContent = "";
  hand.classList.toggle("many", f.seat !== null && t.hand_sizes[f.seat] > 16);
  if (f.seat !== null && t.hands[f.seat] && !f.over) {
    for (const code of t.hands[f.seat]) {  // every copy of a playable kind plays that kind
      hand.appendChild(handCard(code, plays.has(code) ? plays.get(code) : null));
    }
  }
  const actions = $("actions");
  actions.textContent = "";
  for (const [a, label] of others) actions.appendChild(button(a, label));
  const log = $("log");
  log.textContent = "";
  for (const line of f.log) {
    const li = document.createElement("li");
    li.textContent = line;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  $("end").hidden = !f.over;
  $("decide").hidden = f.over;
  $("again").hidden = f.seat === null;
  if (f.over) $("result").textContent = f.result;
  else $("session").textContent = "";
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + "/ws/" + token);
  socket.addEventListener("open", () => { retry = 0; $("connection").textContent = "connected"; });
  socket.addEventListener("message", (e) => {
    if (capture) window.unoFrames.push(e.data);
    const f = JSON.parse(e.data);
    if (f.type === "state") { $("error").textContent = ""; show(f); }
    else if (f.type === "error") $("error").textContent = f.message;
    else if (f.type === "session") $("session").textContent = f.last + " " + f.summary.text;
  });
  socket.addEventListener("close", (e) => {
    if (e.code === 4404) { $("connection").textContent = "this link opens no table"; return; }
    $("connection").textContent = "disconnected; reconnecting…";
    retry = Math.min(retry + 1, 5);
    setTimeout(connect, 500 * retry);  // rejoin the same seat with the same link
  });
}

$("again").addEventListener("click", () => send({ type: "again" }));
connect();
