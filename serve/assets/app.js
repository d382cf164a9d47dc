// solve2048 serve: the page. Plain JavaScript, no build step, no library.
//
// The server is the source of truth: every board shown, its win probability
// and each move's value come from the JSON API. A person's game is a seed and
// the moves played ("LURD..."); each move sends them to POST /api/step, which
// replays them from the seed and answers the board they lead to. The seed and
// moves live in the page's address (#seed=7&moves=LU), so a game is shared by
// its link.
"use strict";

const MOVES = ["left", "right", "up", "down"];
const ARROWS = { left: "\u2190", right: "\u2192", up: "\u2191", down: "\u2193" };
const LETTERS = { left: "L", right: "R", up: "U", down: "D" };
const KEYS = {
  ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down",
  a: "left", d: "right", w: "up", s: "down",
  h: "left", l: "right", k: "up", j: "down",
};
const SVG_NS = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

let game = null; // GET /api/game
const play = { seed: 0, moves: "", answer: null, queue: [], busy: false };
const watch = { timer: null, game: null, index: 0 };

// ---- the API ----

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) {
    throw new Error(data.error || `${response.status} ${response.statusText}`);
  }
  return data;
}

// ---- boards ----

// The cells of a board in hex form, `rows` rows of `cols`, row by row: tile
// values, 0 for empty.
function cells(hex, rows, cols) {
  const x = BigInt(hex);
  const out = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const e = Number((x >> BigInt(16 * r + 4 * c)) & 15n);
      out.push(e === 0 ? 0 : 2 ** e);
    }
  }
  return out;
}

function tileClass(v) {
  if (v === 0) return "tile";
  const digits = String(v).length;
  return `tile ${v <= 2048 ? `t${v}` : "tbig"}${digits >= 3 ? ` d${digits}` : ""}`;
}

// Draw a board (hex form) into `el`; `spawn` ({row, col}) marks the new tile.
function drawBoard(el, hex, spawn) {
  const rows = game.rows;
  const cols = game.columns;
  // --n, the longer side, sizes the tiles' text; a rectangle's cells stay
  // square.
  el.style.setProperty("--n", Math.max(rows, cols));
  el.style.setProperty("--rows", rows);
  el.style.setProperty("--cols", cols);
  el.dataset.hex = hex;
  const values = cells(hex, rows, cols);
  el.replaceChildren(...values.map((v, i) => {
    const d = document.createElement("div");
    d.className = tileClass(v);
    if (spawn && spawn.row * cols + spawn.col === i) d.classList.add("new");
    d.textContent = v === 0 ? "" : String(v);
    return d;
  }));
}

// Whether the game's values are expected scores (else win probabilities).
function scored() {
  return game !== null && game.objective === "score";
}

// A value as the page writes it: a probability as a percentage with five
// significant digits (1.1338%, 97.030%), so that the moves of a hard game
// still differ on the page; an expected score with two decimals.
function shown(v) {
  return scored() ? v.toFixed(2) : `${(100 * v).toPrecision(5)}%`;
}

// A difference of values, with two significant digits (0.0012%, 0.31).
function points(d) {
  return scored() ? d.toPrecision(2) : `${(100 * d).toPrecision(2)}%`;
}

// ---- playing ----

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const seed = Number(params.get("seed"));
  return {
    seed: Number.isSafeInteger(seed) && seed >= 0 && params.has("seed") ? seed : null,
    moves: (params.get("moves") || "").replace(/[^LRUD]/gi, "").toUpperCase(),
  };
}

function writeHash() {
  const hash = `#seed=${play.seed}` + (play.moves ? `&moves=${play.moves}` : "");
  history.replaceState(null, "", hash);
  $("share").href = hash;
}

async function startGame(seed, moves) {
  play.seed = seed;
  play.moves = moves || "";
  play.queue = [];
  $("seed").value = String(seed);
  await refresh();
}

// Ask the server for the game after `play.moves`, and show it.
async function refresh() {
  play.busy = true;
  try {
    const answer = await api("/api/step", { seed: play.seed, moves: play.moves });
    play.answer = answer;
    showPlay(answer);
    writeHash();
    $("message").textContent = "";
  } catch (e) {
    $("message").textContent = e.message;
    // A bad link or a refused move: fall back to the moves the server took.
    if (play.answer && play.answer.seed === play.seed && play.answer.moves !== play.moves) {
      play.moves = play.answer.moves;
      writeHash();
    }
  } finally {
    play.busy = false;
  }
  if (play.queue.length > 0) move(play.queue.shift());
}

function showPlay(a) {
  drawBoard($("board"), a.hex, a.spawn);
  $("board").dataset.turn = String(a.turn);
  $("value").textContent = shown(a.value);
  $("value").dataset.value = String(a.value);
  $("score").textContent = String(a.score);
  $("turn").textContent = String(a.turn);
  const status = $("status");
  status.className = `status-${a.status}`;
  status.textContent = a.status === "won" ? `won: ${game.target} reached`
    : a.status === "lost" ? "lost: no move left" : "playing";
  $("best").textContent = a.best || "";
  const best = a.best ? a.actions[a.best] : null;
  const rows = MOVES.map((m) => {
    const tr = document.createElement("tr");
    tr.dataset.move = m;
    const v = a.actions[m];
    tr.className = v === null ? "illegal" : m === a.best ? "best" : "";
    const cost = v === null ? "" : m === a.best ? "best"
      : best - v < 1e-12 ? "tied" : `\u2212${points(best - v)}`;
    for (const text of [`${ARROWS[m]} ${m}`, v === null ? "(changes nothing)" : shown(v), cost]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    if (v !== null) tr.dataset.value = String(v);
    return tr;
  });
  $("moves").tBodies[0].replaceChildren(...rows);
  $("undo").disabled = a.turn === 0;
}

function move(m) {
  if (play.busy) {
    if (play.queue.length < 8) play.queue.push(m);
    return;
  }
  const a = play.answer;
  if (!a) return;
  if (a.status !== "playing") {
    $("message").textContent = "The game is over: start a new one.";
    return;
  }
  if (a.actions[m] === null) {
    $("message").textContent = `${m} changes nothing here.`;
    return;
  }
  play.moves += LETTERS[m];
  refresh();
}

function onKey(e) {
  const tag = (e.target && e.target.tagName) || "";
  if (["INPUT", "SELECT", "TEXTAREA"].includes(tag)) return;
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const m = KEYS[e.key];
  if (!m) return;
  e.preventDefault();
  move(m);
}

function onSwipes(el) {
  let start = null;
  el.addEventListener("touchstart", (e) => {
    const t = e.changedTouches[0];
    start = { x: t.clientX, y: t.clientY };
  }, { passive: true });
  el.addEventListener("touchend", (e) => {
    if (!start) return;
    const t = e.changedTouches[0];
    const dx = t.clientX - start.x;
    const dy = t.clientY - start.y;
    start = null;
    if (Math.max(Math.abs(dx), Math.abs(dy)) < 30) return;
    move(Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? "right" : "left") : (dy > 0 ? "down" : "up"));
  });
}

function randomSeed() {
  return Math.floor(Math.random() * 1e9);
}

// ---- watching a player ----

function stopWatching() {
  clearInterval(watch.timer);
  watch.timer = null;
}

function speed() {
  return Number($("speed").value);
}

async function startWatching() {
  stopWatching();
  const seed = Number($("watch-seed").value);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    $("watch-end").textContent = "The seed is a whole number from 0.";
    return;
  }
  $("watch-end").textContent = "Playing\u2026";
  try {
    watch.game = await api("/api/play", { seed, player: $("player").value });
  } catch (e) {
    $("watch-end").textContent = e.message;
    return;
  }
  watch.index = 0;
  $("watch-chart").replaceChildren();
  showWatchStep();
  watch.timer = setInterval(showWatchStep, 1000 / speed());
}

function showWatchStep() {
  const g = watch.game;
  const i = watch.index;
  if (i < g.steps.length) {
    const s = g.steps[i];
    drawBoard($("watch-board"), s.board);
    $("watch-value").textContent = shown(s.value);
    $("watch-turn").textContent = String(i + 1);
    $("watch-move").textContent = `${ARROWS[s.move]} ${s.move}`;
    $("watch-cost").textContent = s.move === s.best ? "(optimal)"
      : `(best was ${s.best}; this move costs ${points(s.value - s.move_value)})`;
    $("watch-end").textContent = "";
  } else {
    drawBoard($("watch-board"), g.last.hex);
    $("watch-value").textContent = shown(g.last.value);
    $("watch-end").textContent = `${g.player} ${g.end === "stopped" ? "stopped" : g.end} after `
      + `${g.steps.length} moves, score ${g.score}.`;
    stopWatching();
  }
  drawChart(g, Math.min(i + 1, g.steps.length));
  watch.index += 1;
}

function drawChart(g, upto) {
  const chart = $("watch-chart");
  const total = Math.max(g.steps.length, 1);
  // Probabilities on a scale of 0 to 1; expected scores of 0 to the first.
  const top = scored() ? Math.max(g.steps.length > 0 ? g.steps[0].value : 1, 1e-9) : 1;
  const points = g.steps.slice(0, upto).map((s, i) =>
    `${(300 * i / total).toFixed(1)},${(100 - 100 * s.value / top).toFixed(1)}`);
  let line = chart.querySelector("polyline");
  if (!line) {
    line = document.createElementNS(SVG_NS, "polyline");
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "#f65e3b");
    line.setAttribute("stroke-width", "1.5");
    line.setAttribute("vector-effect", "non-scaling-stroke");
    chart.append(line);
  }
  line.setAttribute("points", points.join(" "));
}

// ---- the 2x2 MDP graph ----

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const TILE_FILL = { 0: "#cdc1b4", 2: "#eee4da", 4: "#ede0c8", 8: "#f2b179", 16: "#f59563", 32: "#f67c5f", 64: "#f65e3b" };

async function drawGraph() {
  const g = await api("/api/graph");
  const colW = 110;
  const rowH = 86;
  const box = 46;
  const columns = new Map(g.layers.map((sum, i) => [sum, []]));
  for (const node of g.nodes) columns.get(node.sum).push(node);
  const tallest = Math.max(2, ...[...columns.values()].map((c) => c.length));
  const width = colW * (g.layers.length + 1) + 40;
  const height = rowH * tallest + 60;
  const where = new Map();
  g.layers.forEach((sum, i) => {
    const col = columns.get(sum);
    const top = (height - 30 - rowH * col.length) / 2 + 30;
    col.forEach((node, j) => where.set(node.id, { x: 20 + colW * i, y: top + rowH * j }));
  });
  const terminalX = 20 + colW * g.layers.length;
  where.set("win", { x: terminalX, y: height / 2 - rowH });
  where.set("lose", { x: terminalX, y: height / 2 + 10 });

  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, "font-family": "DejaVu Sans, Arial, sans-serif" });
  g.layers.forEach((sum, i) => {
    root.append(svg("text", { x: 20 + colW * i + box / 2, y: 18, "text-anchor": "middle", "font-size": 12, fill: "#8f857c" }, `sum ${sum}`));
  });
  const edges = svg("g", { class: "edges" });
  for (const e of g.edges) {
    const a = where.get(e.from);
    const b = where.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + box;
    const y1 = a.y + box / 2;
    const x2 = b.x;
    const y2 = b.y + box / 2;
    const mid = (x1 + x2) / 2;
    const colour = e.to === "win" ? "#2e7d32" : e.to === "lose" ? "#b3541e" : "#8f7a66";
    const path = svg("path", {
      d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
      fill: "none", stroke: colour, "stroke-opacity": 0.55,
      "stroke-width": (0.5 + 3 * e.probability).toFixed(2),
      class: `edge to-${e.to === "win" || e.to === "lose" ? e.to : "state"}`,
    });
    path.append(svg("title", {}, `${(100 * e.probability).toFixed(1)}%`));
    edges.append(path);
  }
  root.append(edges);
  for (const node of g.nodes) {
    const p = where.get(node.id);
    const group = svg("g", { class: node.start > 0 ? "node start" : "node", transform: `translate(${p.x},${p.y})`, "data-id": node.id });
    group.append(svg("rect", { x: -2, y: -2, width: box + 4, height: box + 4, rx: 4, fill: "#bbada0", stroke: node.start > 0 ? "#3c3a32" : "none", "stroke-width": 2 }));
    node.cells.forEach((v, i) => {
      const cx = (i % 2) * (box / 2);
      const cy = Math.floor(i / 2) * (box / 2);
      group.append(svg("rect", { x: cx + 1, y: cy + 1, width: box / 2 - 2, height: box / 2 - 2, rx: 2, fill: TILE_FILL[v] || "#3c3a32" }));
      if (v) group.append(svg("text", { x: cx + box / 4, y: cy + box / 4 + 4, "text-anchor": "middle", "font-size": v >= 16 ? 9 : 11, "font-weight": "bold", fill: v >= 8 ? "#f9f6f2" : "#776e65" }, String(v)));
    });
    group.append(svg("text", { x: box / 2, y: box + 14, "text-anchor": "middle", "font-size": 11, fill: "#3c3a32" }, `${ARROWS[node.best]} ${node.value.toFixed(3)}`));
    group.append(svg("title", {}, `${node.board}\n${game.value_name} ${node.value}\noptimal move ${node.best}` + (node.start > 0 ? `\nstart probability ${node.start.toFixed(4)}` : "")));
    root.append(group);
  }
  for (const [id, label, fill] of [["win", "WIN", "#2e7d32"], ["lose", "LOSE", "#b3541e"]]) {
    const p = where.get(id);
    const group = svg("g", { class: `node terminal ${id}`, transform: `translate(${p.x},${p.y})` });
    group.append(svg("rect", { width: box + 20, height: box, rx: 6, fill }));
    group.append(svg("text", { x: (box + 20) / 2, y: box / 2 + 5, "text-anchor": "middle", "font-size": 14, "font-weight": "bold", fill: "#fff" }, label));
    root.append(group);
  }
  $("graph").replaceChildren(root);
  $("graph").dataset.nodes = String(g.nodes.length);
}

// ---- start ----

async function main() {
  try {
    game = await api("/api/game");
  } catch (e) {
    $("game-info").textContent = `The server did not answer: ${e.message}`;
    return;
  }
  document.title = `solve2048: ${game.game}`;
  $("game-info").textContent = `${game.game}: ${game.states.toLocaleString("en")} states; `
    + (scored() ? `optimal play scores ${shown(game.start_value)} on average`
      : `optimal play wins ${shown(game.start_value)} of games`) + " from the random start.";
  const name = game.value_name.charAt(0).toUpperCase() + game.value_name.slice(1);
  for (const e of document.querySelectorAll(".value-name")) e.textContent = name;
  $("player").replaceChildren(...game.players.map((p) => {
    const o = document.createElement("option");
    o.value = p;
    o.textContent = p;
    return o;
  }));
  const showSpeed = () => { $("speed-label").textContent = `${speed()} moves/s`; };
  showSpeed();
  $("speed").addEventListener("input", () => {
    showSpeed();
    if (watch.timer) {
      clearInterval(watch.timer);
      watch.timer = setInterval(showWatchStep, 1000 / speed());
    }
  });
  drawBoard($("watch-board"), "0x0");
  $("watch-start").addEventListener("click", startWatching);
  $("watch-stop").addEventListener("click", stopWatching);
  document.addEventListener("keydown", onKey);
  onSwipes($("board"));
  $("new-game").addEventListener("click", () => {
    const seed = Number($("seed").value);
    if (!Number.isSafeInteger(seed) || seed < 0) {
      $("message").textContent = "The seed is a whole number from 0.";
      return;
    }
    startGame(seed, "");
  });
  $("random-game").addEventListener("click", () => startGame(randomSeed(), ""));
  $("undo").addEventListener("click", () => {
    if (play.moves.length > 0 && !play.busy) {
      play.moves = play.moves.slice(0, -1);
      refresh();
    }
  });
  window.addEventListener("hashchange", () => {
    const h = readHash();
    if (h.seed !== null && (h.seed !== play.seed || h.moves !== play.moves)) startGame(h.seed, h.moves);
  });
  $("plot").src = "/api/plot.svg";
  if (game.graph) {
    $("graph-section").hidden = false;
    drawGraph().catch((e) => { $("graph").textContent = e.message; });
  }
  const h = readHash();
  await startGame(h.seed === null ? randomSeed() : h.seed, h.moves);
  document.body.dataset.ready = "true";
}

main();
