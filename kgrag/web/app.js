// kgrag's web page: ask, watch the plan run, inspect evidence, explore the graph around an answer, manage documents.
// Plain DOM and SVG, no dependencies. Everything shown comes from the service's JSON API (/v1/...).
"use strict";
(() => {
  // --- small helpers ------------------------------------------------------------------------------------
  const $ = (selector, root = document) => root.querySelector(selector);
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function svg(tag, attrs = {}) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, v);
    return node;
  }

  const count = (n, word, words = `${word}s`) => `${n} ${n === 1 ? word : words}`; // "1 fact", "2 facts"
  const fmt = (x, digits = 2) => (typeof x === "number" && isFinite(x) ? x.toFixed(digits) : "–");
  const norm = (s) => (s || "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

  // Text with each of ``sentences`` marked (whitespace-insensitive), built from text nodes: documents are never HTML.
  function highlighted(text, sentences) {
    const found = [];
    for (const sentence of [].concat(sentences || [])) {
      const words = (sentence || "").trim().split(/\s+/).filter(Boolean);
      if (!words.length) continue;
      const m = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+")).exec(text);
      if (m) found.push([m.index, m.index + m[0].length]);
    }
    found.sort((a, b) => a[0] - b[0]);
    const frag = document.createDocumentFragment();
    let at = 0;
    for (const [start, end] of found) {
      if (start < at) continue; // overlapping sentences: the first one wins
      frag.append(text.slice(at, start), el("mark", { text: text.slice(start, end) }));
      at = end;
    }
    frag.append(text.slice(at));
    return frag;
  }

  // --- timings the browser test reads: when an event arrived and when its change was on screen -----------
  const timings = (window.__kgragTimings = []);
  function timed(event, id, arrived) {
    const record = { event, id, arrived, applied: performance.now(), painted: null };
    timings.push(record);
    // after the next frame: the change has been laid out and painted
    requestAnimationFrame(() => setTimeout(() => { record.painted = performance.now(); }, 0));
  }

  // --- API ------------------------------------------------------------------------------------------------
  let apiKey = sessionStorage.getItem("kgrag.key") || "";
  const keyInput = $("#api-key");
  keyInput.value = apiKey;
  $("#key-form").addEventListener("submit", (e) => { e.preventDefault(); keyInput.dispatchEvent(new Event("change")); });
  keyInput.addEventListener("change", () => {
    apiKey = keyInput.value.trim();
    sessionStorage.setItem("kgrag.key", apiKey);
    hideBanner();
    refreshDocuments();
    refreshEntities();
    // a conversation link opened before the key was given (the key is kept per tab): open it now
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.get("thread") && (!view.conversation || view.conversation.id !== params.get("thread"))) routeFromHash();
  });

  function authHeaders(extra = {}) {
    return apiKey ? { ...extra, Authorization: `Bearer ${apiKey}` } : extra;
  }

  async function failure(res) {
    let message = `${res.status} ${res.statusText}`;
    try { message = (await res.json()).error.message || message; } catch (_) { /* not JSON */ }
    if (res.status === 401) {
      showBanner(apiKey ? "The API key was refused: check it in the field at the top right."
        : "This server needs an API key: enter it in the field at the top right.");
      keyInput.focus();
    }
    return new Error(message);
  }

  async function api(path, options = {}) {
    const res = await fetch(path, { ...options, headers: authHeaders(options.headers || {}) });
    if (!res.ok) throw await failure(res);
    return res.json();
  }

  function showBanner(text) { const b = $("#banner"); b.textContent = text; b.hidden = false; }
  function hideBanner() { $("#banner").hidden = true; }

  // --- the view's state -----------------------------------------------------------------------------------
  const view = {
    index: null,
    conversation: null, // {id, index, title}
    turns: [],          // one per question asked in the conversation (see newTurn)
    shown: null,        // the turn on screen
    selected: null,     // {type, id} shown in the inspector
    running: false,
  };

  function newTurn(question, graph) {
    return { question, graph, planner: null, order: [], subs: {}, propex: {}, answer: null, tokens: "",
             fused: [], threadLoaded: false };
  }

  // --- conversations (this browser's list) -------------------------------------------------------------------
  const THREADS = "kgrag.threads";
  const loadThreads = () => { try { return JSON.parse(localStorage.getItem(THREADS) || "[]"); } catch (_) { return []; } };

  function saveThread(entry) {
    const threads = loadThreads().filter((t) => t.id !== entry.id);
    threads.unshift(entry);
    localStorage.setItem(THREADS, JSON.stringify(threads.slice(0, 100)));
    renderThreads();
  }

  const threadLink = (id, index) => `#thread=${encodeURIComponent(id)}&index=${encodeURIComponent(index)}`;

  function renderThreads() {
    const list = $("#threads");
    const threads = loadThreads();
    list.replaceChildren(...threads.map((t) => el("li", {},
      el("a", { href: threadLink(t.id, t.index), "aria-current": view.conversation && view.conversation.id === t.id ? "true" : null,
                "data-thread": t.id },
        el("span", { class: "title", text: t.title }), el("small", { text: `${t.index} · ${count(t.turns, "question")} · ${new Date(t.updated).toLocaleString()}` })))));
    $("#no-threads").hidden = threads.length > 0;
  }

  function renderThreadNote() {
    const note = $("#thread-note");
    if (!view.conversation) { note.textContent = "New conversation: follow-up questions will stay in it."; return; }
    note.replaceChildren("Follow-up in “", el("strong", { text: view.conversation.title }), "” · ",
      el("a", { href: threadLink(view.conversation.id, view.conversation.index), text: "link to this conversation" }));
  }

  function newConversation() {
    view.conversation = null;
    view.turns = [];
    view.shown = null;
    view.selected = null;
    history.replaceState(null, "", location.pathname);
    renderAll();
    clearGraph();
    $("#question").focus();
  }
  $("#new-thread").addEventListener("click", newConversation);

  // --- asking ------------------------------------------------------------------------------------------------
  const randomId = () => "web-" + Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");

  $("#ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("#question").value.trim();
    if (question && !view.running) ask(question);
  });

  async function ask(question) {
    const graphName = document.querySelector("input[name=graph]:checked").value;
    const before = { conversation: view.conversation, turns: [...view.turns], shown: view.shown, selected: view.selected };
    if (!view.conversation || view.conversation.index !== view.index) {
      view.conversation = { id: randomId(), index: view.index, title: question.slice(0, 160) };
      view.turns = [];
    }
    const conv = view.conversation;
    const turn = newTurn(question, graphName);
    view.turns.push(turn);
    view.shown = turn;
    const mode = $("#mode").value;
    const body = { question, conversation_id: conv.id, model: mode === "full" ? view.index : `${view.index}:${mode}`,
                   graph: graphName };
    if ($("#route").value) body.route = $("#route").value;
    if ($("#alpha").value !== "") body.alpha = Number($("#alpha").value);
    history.replaceState(null, "", threadLink(conv.id, conv.index));
    hideBanner();
    setRunning(true, "planning…");
    const started = performance.now();
    renderAll();
    if (graphName === "propex") propexNodes(turn);
    try {
      const res = await fetch("/v1/ask?format=jsonl", {
        method: "POST", headers: authHeaders({ "Content-Type": "application/json" }), body: JSON.stringify(body) });
      if (!res.ok) { withdraw(turn, before, res.status, await failure(res)); return; }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const arrived = performance.now();
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, cut).trim();
          buffer = buffer.slice(cut + 1);
          if (line) handle(turn, JSON.parse(line), arrived);
        }
      }
    } catch (err) {
      showAnswerError(turn, err.message);
    } finally {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const n = turn.order.length;
      setRunning(false, turn.error ? "" : turn.graph === "propex" ? `ProPEX · ${seconds} s`
        : turn.planner === "small-talk" ? `small talk, no plan · ${seconds} s`
        : `${count(n, "sub-question")}${turn.planner ? ` (${turn.planner} plan)` : ""} · ${seconds} s`);
    }
  }

  // A question the service refused (no key, too long, too many requests) was never asked: no turn is left for it,
  // the page is as it was, the question stays in its box and the banner says why.
  function withdraw(turn, before, status, err) {
    turn.error = err.message;
    Object.assign(view, before);
    setRunning(false);
    const conv = view.conversation;
    history.replaceState(null, "", conv ? threadLink(conv.id, conv.index) : location.pathname);
    if (status !== 401) showBanner(`The question was not asked: ${err.message}`); // 401: failure() has said it
    renderAll();
  }

  function setRunning(running, text = "") {
    view.running = running;
    $("#ask").disabled = running;
    $("#run-status").textContent = text;
  }

  // --- the event stream ---------------------------------------------------------------------------------------
  function handle(turn, msg, arrived) {
    if (msg.type === "draft") {  // the model's answer as it is written, shown as a draft until it is checked
      turn.tokens += msg.text;
      if (view.shown === turn) renderTokens(turn);
      return;
    }
    if (msg.type === "error") { showAnswerError(turn, msg.error); return; }
    if (msg.type === "answer") {
      turn.answer = msg;
      turn.planner = turn.planner || msg.planner;
      if (view.shown === turn) { renderAnswer(turn); if (!turn.order.length) renderDag(turn); }
      timed("answer", "answer", arrived);
      finishTurn(turn);
      return;
    }
    const data = msg.data || {};
    const event = msg.event;
    const sub = data.id ? turn.subs[data.id] : null;
    switch (event) {
      case "plan":
        turn.planner = data.planner;
        turn.notes = data.notes || [];
        turn.order = [];
        for (const s of data.subquestions) {
          turn.order.push(s.id);
          turn.subs[s.id] = { ...s, status: "pending", rephrased: null, alternatives: [], evidence: [], answer: null,
                              confidence: null, sentence: "", sources: [], candidates: [], rerank: null, notes: {} };
        }
        setRunning(true, `plan: ${count(data.subquestions.length, "sub-question")} (${data.planner})`);
        if (view.shown === turn) renderDag(turn);
        timed(event, "plan", arrived);
        return;
      case "subquestion_started": if (sub) sub.status = "running"; break;
      case "subquestion_rephrased": if (sub) { sub.rephrased = data.rephrased; sub.alternatives = data.alternatives || []; } break;
      case "subquestion_retrieved":
        if (sub) {
          sub.route = data.route;
          sub.evidence = data.evidence.map((e) => ({ ...e, R: e.score, M: null, text: null }));
          Object.assign(sub.notes, data.notes || {});
        }
        break;
      case "subquestion_reranked":
        if (sub) {
          sub.rerank = { alpha: data.alpha, beta: data.beta };
          const byId = Object.fromEntries(sub.evidence.map((e) => [e.id, e]));
          sub.evidence = data.evidence.map((e) => ({ ...(byId[e.id] || { id: e.id, titles: [] }), R: e.R, M: e.M, score: e.score }));
        }
        break;
      case "subquestion_answered":
        if (sub) {
          Object.assign(sub, { status: data.status, answer: data.answer, confidence: data.confidence, sentence: data.sentence,
                               sources: data.sources || [], candidates: data.candidates || [] });
          Object.assign(sub.notes, data.notes || {});
        }
        break;
      case "evidence_fused":
        turn.fused = data.evidence || [];
        setRunning(true, `writing the answer from ${data.count} evidence items…`);
        timed(event, "fused", arrived);
        return;
      case "facts_retrieved": turn.propex.facts = data.facts; updateNode(turn, "facts"); timed(event, "facts", arrived); return;
      case "facts_filtered":
        turn.propex.kept = data.kept; turn.propex.filter = data.filter;
        updateNode(turn, "kept"); timed(event, "kept", arrived); return;
      case "passages_ranked":
        Object.assign(turn.propex, { seeds: data.seeds || [], passages: data.passages || [], fallback: data.fallback });
        updateNode(turn, "ppr"); timed(event, "ppr", arrived); return;
      case "final_answer":
        setRunning(true, "answer ready");
        timed(event, "final", arrived);
        return;
      default:
        return;
    }
    if (sub) {
      updateNode(turn, data.id);
      if (view.selected && view.selected.type === "sub" && view.selected.id === data.id && view.shown === turn) showSub(data.id);
      timed(event, data.id, arrived);
    }
  }

  async function finishTurn(turn) {
    const conv = view.conversation;
    if (!conv) return;
    saveThread({ id: conv.id, index: conv.index, title: conv.title, updated: Date.now(), turns: view.turns.length });
    renderThreadNote();
    renderTranscript();
    $("#question").value = "";
    await enrichFromThread(turn);
    if (view.shown === turn) loadAnswerGraph(turn);
  }

  // The checkpointed thread holds what the events leave out: evidence texts, PPR seeds, candidates' sentences.
  async function enrichFromThread(turn) {
    if (turn.graph !== "pankrag" || !view.conversation) return;
    try {
      const thread = await api(`/v1/threads/${encodeURIComponent(view.conversation.id)}?model=${encodeURIComponent(view.conversation.index)}`);
      for (const record of thread.subquestions) {
        if (turn.subs[record.id]) mergeRecord(turn.subs[record.id], record);
      }
      turn.threadLoaded = true;
      if (view.selected && view.selected.type === "sub" && view.shown === turn) showSub(view.selected.id);
    } catch (_) { /* the page still shows what the events carried */ }
  }

  function mergeRecord(sub, record) {
    Object.assign(sub, {
      question: record.question, rephrased: record.rephrased, route: record.route, kind: record.kind, status: record.status,
      depends_on: record.depends_on, answer: record.answer, confidence: record.confidence,
      sentence: record.supporting_sentence || sub.sentence || "", sources: record.sources || [],
      candidates: record.candidates || [], notes: record.notes || {}, rerank: record.rerank || sub.rerank,
      retrieval: record.retrieval || [],
      alternatives: (record.queries || []).slice(1).map((q) => q.text),
      evidence: (record.evidence || []).map((e) => ({ id: e.id, kind: e.kind, titles: e.titles || [], text: e.text,
        R: e.retrieval_score, M: e.dependency_similarity, score: e.score, doc_ids: e.doc_ids })),
    });
  }

  // --- the plan as a DAG: columns by dependency depth, fixed-size cards (no layout shift as they fill) --------
  const CARD_W = 168, CARD_H = 130, GAP_X = 32, GAP_Y = 12, PAD = 8;

  function depths(turn) {
    const depth = {};
    const of = (id, seen = new Set()) => {
      if (depth[id] !== undefined) return depth[id];
      if (seen.has(id)) return 0;
      seen.add(id);
      const deps = (turn.subs[id].depends_on || []).filter((d) => turn.subs[d]);
      depth[id] = deps.length ? 1 + Math.max(...deps.map((d) => of(d, seen))) : 0;
      return depth[id];
    };
    turn.order.forEach((id) => of(id));
    return depth;
  }

  function renderDag(turn) {
    const dag = $("#dag");
    if (!turn) { dag.replaceChildren(el("p", { class: "placeholder", text: "The plan appears here as the question is worked out." })); return; }
    if (turn.graph === "propex") { renderPropexDag(turn); return; }
    if (!turn.order.length) {
      dag.replaceChildren(el("p", { class: "placeholder", "data-plan": turn.planner || "", text:
        turn.planner === "small-talk" ? "No plan needed: small talk, nothing to look up in the documents."
        : turn.reopened ? "This conversation's checkpoint keeps no plan for this answer."
        : turn.error ? "No plan: the question stopped with an error."
        : turn.answer ? "No sub-questions: answered directly." : "Planning…" }));
      return;
    }
    const depth = depths(turn);
    const columns = [];
    for (const id of turn.order) (columns[depth[id]] = columns[depth[id]] || []).push(id);
    const pos = {};
    columns.forEach((ids, c) => ids.forEach((id, r) => { pos[id] = { x: PAD + c * (CARD_W + GAP_X), y: PAD + r * (CARD_H + GAP_Y) }; }));
    const width = PAD * 2 + columns.length * (CARD_W + GAP_X) - GAP_X;
    const height = PAD * 2 + Math.max(...columns.map((c) => c.length)) * (CARD_H + GAP_Y) - GAP_Y;
    const links = svg("svg", { class: "links", width, height, "aria-hidden": "true" });
    const defs = svg("defs");
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#9aa3b2" }));
    defs.append(marker);
    links.append(defs);
    for (const id of turn.order) {
      for (const dep of turn.subs[id].depends_on || []) {
        if (!pos[dep]) continue;
        const a = pos[dep], b = pos[id];
        const x1 = a.x + CARD_W, y1 = a.y + CARD_H / 2, x2 = b.x - 2, y2 = b.y + CARD_H / 2;
        const mid = (x1 + x2) / 2;
        links.append(svg("path", { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
      }
    }
    const cards = turn.order.map((id) => {
      const node = el("button", { type: "button", class: "node", "data-id": id, style: `left:${pos[id].x}px;top:${pos[id].y}px`,
                                  "aria-pressed": "false", onclick: () => select({ type: "sub", id }) },
        el("span", { class: "head" }, el("span", { class: "nid" }), el("span", { class: "badge route" }), el("span", { class: "status" })),
        el("span", { class: "q" }), el("span", { class: "re" }), el("span", { class: "ans" }),
        el("span", { class: "conf", "aria-hidden": "true" }, el("span")));
      return node;
    });
    const inner = el("div", { style: `position:relative;width:${width}px;height:${height}px` }, links, ...cards);
    dag.replaceChildren(inner);
    turn.order.forEach((id) => updateNode(turn, id));
    markSelected();
  }

  function updateNode(turn, id) {
    if (view.shown !== turn) return;
    const card = document.querySelector(`#dag .node[data-id="${CSS.escape(id)}"]`);
    if (!card) return;
    if (turn.graph === "propex") { fillPropexNode(turn, id, card); return; }
    const s = turn.subs[id];
    const status = s.status || "pending";
    card.dataset.status = status;
    $(".nid", card).textContent = id.includes(":") ? id.split(":")[1] : id;
    $(".route", card).textContent = s.route === "none" ? "combine" : s.route || "";
    $(".status", card).textContent = { pending: "waiting", running: "running…", answered: "answered", not_found: "not found",
                                       failed: "failed" }[status] || status;
    $(".q", card).textContent = s.question;
    $(".q", card).title = s.question;
    $(".re", card).textContent = s.rephrased ? `→ ${s.rephrased}` : (status === "running" && s.evidence.length ? `${s.evidence.length} evidence items` : "");
    $(".re", card).title = s.rephrased || "";
    const conf = typeof s.confidence === "number" ? s.confidence : null;
    card.dataset.confidence = conf === null || status !== "answered" ? "" : confidenceWord(conf).split(":")[0];
    if (card.dataset.confidence === "low") $(".status", card).textContent = "low confidence"; // not a green "answered"
    $(".ans", card).textContent = s.answer ? `${s.answer}${conf !== null ? `  (${fmt(conf)})` : ""}` : "";
    $(".conf span", card).style.width = conf !== null ? `${Math.round(conf * 100)}%` : "0";
    card.setAttribute("aria-label", `Sub-question ${id}: ${s.rephrased || s.question}. ${$(".status", card).textContent}.` +
      (s.answer ? ` Answer: ${s.answer}, confidence ${fmt(conf)}.` : ""));
  }

  // ProPEX has no plan: its three steps are shown as a fixed pipeline that fills in the same way.
  const PROPEX_STEPS = [["facts", "Facts retrieved", "nearest facts (triples) to the question"],
                        ["kept", "Facts kept", "the filter keeps the relevant ones"],
                        ["ppr", "Passages ranked", "Personalized PageRank from the kept facts' entities"]];

  function propexNodes(turn) { renderDag(turn); }

  function renderPropexDag(turn) {
    const width = PAD * 2 + 3 * (CARD_W + GAP_X) - GAP_X, height = PAD * 2 + CARD_H;
    const links = svg("svg", { class: "links", width, height, "aria-hidden": "true" });
    for (let i = 0; i < 2; i++) {
      const x1 = PAD + i * (CARD_W + GAP_X) + CARD_W, x2 = x1 + GAP_X - 2, y = PAD + CARD_H / 2;
      links.append(svg("path", { d: `M${x1},${y} L${x2},${y}` }));
    }
    const cards = PROPEX_STEPS.map(([id, title, what], i) => el("button", {
      type: "button", class: "node", "data-id": id, "data-status": "pending", style: `left:${PAD + i * (CARD_W + GAP_X)}px;top:${PAD}px`,
      "aria-pressed": "false", onclick: () => select({ type: "propex", id }) },
      el("span", { class: "head" }, el("span", { class: "nid", text: title }), el("span", { class: "status", text: "waiting" })),
      el("span", { class: "q", text: what }), el("span", { class: "re" }), el("span", { class: "ans" }),
      el("span", { class: "conf", "aria-hidden": "true" }, el("span"))));
    $("#dag").replaceChildren(el("div", { style: `position:relative;width:${width}px;height:${height}px` }, links, ...cards));
    PROPEX_STEPS.forEach(([id]) => updateNode(turn, id));
    markSelected();
  }

  function fillPropexNode(turn, id, card) {
    const p = turn.propex;
    const done = { facts: p.facts, kept: p.kept, ppr: p.passages }[id];
    card.dataset.status = done ? "answered" : "pending";
    $(".status", card).textContent = done ? "done" : "waiting";
    if (!done) return;
    if (id === "facts") { $(".re", card).textContent = count(p.facts.length, "fact"); $(".ans", card).textContent = p.facts[0] || ""; }
    if (id === "kept") { $(".re", card).textContent = `${p.kept.length} kept (${p.filter})`; $(".ans", card).textContent = p.kept[0] || ""; }
    if (id === "ppr") {
      $(".re", card).textContent = p.fallback ? p.fallback : `seeds: ${p.seeds.join(", ")}`;
      $(".ans", card).textContent = p.passages.map((x) => (x.titles || [])[0]).filter(Boolean).slice(0, 3).join(", ");
    }
  }

  function markSelected() {
    for (const card of document.querySelectorAll("#dag .node")) {
      const on = !!view.selected && (view.selected.type === "sub" || view.selected.type === "propex") && card.dataset.id === view.selected.id;
      card.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  // --- the answer ----------------------------------------------------------------------------------------------
  function citationsOf(answer) {
    return (answer.citations || []).map((c) => ({ ...c, title: c.title || (c.titles || []).join(", ") }));
  }

  function withCitationButtons(text) {
    const frag = document.createDocumentFragment();
    text.split(/(\[\d+\])/).forEach((part) => {
      const m = /^\[(\d+)\]$/.exec(part);
      if (m) frag.append(el("button", { type: "button", class: "cite", "data-n": m[1], "aria-label": `Source ${m[1]}`,
                                         onclick: () => select({ type: "citation", id: Number(m[1]) }), text: part }));
      else if (part) frag.append(part);
    });
    return frag;
  }

  function renderTokens(turn) {
    const box = $("#answer");
    let tokens = $(".tokens", box);
    if (!tokens) {
      tokens = el("p", { class: "tokens" });
      box.replaceChildren(el("p", { class: "draft-label", text: "Draft from the model, being checked…" }), tokens);
    }
    tokens.textContent = turn.tokens;
  }

  // The answer's confidence in words, as the CLI says it (kgrag/cli.py, confidence_word): a weak answer must not look
  // as sure as a strong one.
  const confidenceWord = (c) => (c >= 0.75 ? "high" : c >= 0.5 ? "medium" : "low: check the sources");
  // the workflow's words for "the documents do not say" (agent/records.py, is_not_found)
  const notFound = (answer) => !answer || ["not found", "unknown", "none", "n a"].includes(norm(answer));

  function renderAnswer(turn) {
    const box = $("#answer");
    const list = $("#citations");
    box.dataset.confidence = "";
    if (!turn || !turn.answer) {
      box.replaceChildren(turn && turn.error ? el("p", { class: "status-failed", role: "alert", text: `Error: ${turn.error}` })
        : el("p", { class: "placeholder", text: view.running ? "Working…" : "No answer yet." }));
      list.replaceChildren();
      return;
    }
    const a = turn.answer;
    if (turn.planner === "small-talk") { // a reply, not an answer: nothing was looked up, nothing to rate
      box.replaceChildren(el("p", { class: "reply", text: a.answer || "" }));
      list.replaceChildren();
      return;
    }
    const missing = notFound(a.short_answer);
    const how = a.offline ? "" : a.extractive ? " (extracted from the documents)" : " (from the language model)";
    const word = missing ? "none" : confidenceWord(a.confidence || 0);
    box.dataset.confidence = word.split(":")[0];
    const parts = [el("span", { class: "short", text: missing ? "not found" : a.short_answer || "" }),
      el("span", { class: `conf ${box.dataset.confidence}`, text: missing ? `not found in the documents${how}`
        : `confidence ${fmt(a.confidence)}, ${word}${how}` })];
    const text = a.answer && a.answer !== a.short_answer ? el("p", { class: "full" }, withCitationButtons(a.answer)) : null;
    const notes = [];
    if (a.offline) notes.push(el("span", { class: "offline", text: "Answered offline: extracted from the documents, no language model was used." }));
    for (const f of a.fallbacks || []) notes.push(el("div", { class: "muted", text: `fallback: ${f}` }));
    box.replaceChildren(...[el("div", {}, ...parts), text, ...notes].filter(Boolean));
    list.replaceChildren(...citationsOf(a).map((c) => el("li", {},
      el("button", { type: "button", "data-n": c.n, onclick: () => select({ type: "citation", id: c.n }) }, c.title || c.evidence_id))));
  }

  function showAnswerError(turn, message) {
    turn.error = message;
    if (view.shown === turn) { renderAnswer(turn); if (!turn.order.length) renderDag(turn); }
    setRunning(false);
  }

  function renderTranscript() {
    const box = $("#transcript");
    const earlier = view.turns.filter((t) => t !== view.shown && (t.answer || t.messageAnswer));
    box.replaceChildren(...(earlier.length ? [el("h3", { class: "muted", text: "Earlier in this conversation" })] : []),
      ...earlier.map((t) => el("p", {}, el("span", { class: "who", text: "Q" }), t.question, " ",
        el("span", { class: "who", text: "A" }), (t.answer && t.answer.short_answer) || t.messageAnswer || "")));
  }

  function renderTurns() {
    const box = $("#turns");
    if (view.turns.length < 2) { box.replaceChildren(); return; }
    box.replaceChildren(...view.turns.map((t, i) => el("button", {
      type: "button", class: "small", role: "tab", "aria-selected": t === view.shown ? "true" : "false", title: t.question,
      onclick: () => { view.shown = t; view.selected = null; renderAll(); loadAnswerGraph(t); } }, `${i + 1}. ${t.question.slice(0, 40)}`)));
  }

  function renderAll() {
    renderDag(view.shown);
    if (view.shown && view.shown.answer) renderAnswer(view.shown);
    else if (view.shown && view.shown.tokens) renderTokens(view.shown);
    else renderAnswer(view.shown);
    renderTurns();
    renderTranscript();
    renderThreads();
    renderThreadNote();
    if (!view.selected) $("#inspector").replaceChildren(el("p", { class: "placeholder", text: "Choose a sub-question, a citation or a part of the graph to see it here." }));
  }

  // --- the inspector ---------------------------------------------------------------------------------------------
  function select(what) {
    view.selected = what;
    markSelected();
    if (what.type === "sub") showSub(what.id);
    else if (what.type === "propex") showPropex(what.id);
    else if (what.type === "citation") showCitation(what.id);
    revealDetails();
  }

  // On a narrow screen the details are below everything else: what was just chosen is brought into view there.
  // (On a wide one they stay beside the page, always in view: nothing moves.)
  function revealDetails() {
    const panel = $(".inspector"), top = panel.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight - 120) panel.scrollIntoView({ block: "start" });
  }

  function inspector(...children) { $("#inspector").replaceChildren(...children.filter((c) => c !== null && c !== undefined)); }

  function showSub(id) {
    const turn = view.shown;
    const s = turn && turn.subs[id];
    if (!s) return;
    const parts = [el("h3", { text: `${id} · ${s.route === "none" ? "combines answers" : s.route || "?"} · ${s.kind || ""}` }),
                   el("p", { text: s.question })];
    if (s.rephrased) parts.push(el("p", {}, el("span", { class: "muted", text: "Rephrased: " }), s.rephrased));
    for (const alt of s.alternatives || []) parts.push(el("p", { class: "muted", text: `also tried: ${alt}` }));
    if ((s.depends_on || []).length) parts.push(el("p", { class: "muted", text: `Depends on ${s.depends_on.join(", ")}` }));
    parts.push(el("p", {}, el("strong", { text: s.answer ? `Answer: ${s.answer}` : `Status: ${s.status}` }),
                  typeof s.confidence === "number" ? ` (confidence ${fmt(s.confidence)})` : ""));
    if (s.sentence) parts.push(el("p", {}, el("span", { class: "muted", text: "Supporting sentence: " }), el("mark", { text: s.sentence })));
    for (const note of Object.values(s.notes || {})) parts.push(el("p", { class: "muted", text: `fallback: ${note}` }));

    parts.push(el("h4", { text: `Evidence (${s.evidence.length})` + (s.rerank ? ` · score = ${fmt(s.rerank.alpha)}·R + ${fmt(s.rerank.beta)}·M` : " · score = R") }));
    if (!s.evidence.length) parts.push(el("p", { class: "placeholder", text: s.status === "pending" ? "Not retrieved yet." : "No evidence." }));
    const sources = new Set(s.sources || []);
    const items = s.evidence.map((e, i) => {
      const isSource = sources.has(e.id);
      const li = el("li", { class: isSource ? "source" : null, "data-evidence": e.id },
        el("div", {}, el("strong", { text: `${i + 1}. ${(e.titles || []).join(", ") || e.id}` }),
          isSource ? el("span", { class: "badge", text: "answer's source" }) : null, " ", el("span", { class: "badge", text: e.kind || "" })),
        el("div", { class: "scores" }, el("span", {}, "R ", el("b", { text: fmt(e.R, 3) })),
          el("span", {}, "M ", el("b", { text: e.M === null || e.M === undefined ? "–" : fmt(e.M, 3) })),
          el("span", {}, "score ", el("b", { text: fmt(e.score, 3) }))));
      if (e.text) li.append(el("p", { class: "text" }, highlighted(e.text, isSource ? s.sentence : "")));
      return li;
    });
    parts.push(el("ol", { class: "ev", "aria-label": "Evidence" }, ...items));
    if (s.evidence.length && !s.evidence.some((e) => e.text) && view.conversation && s.status !== "pending" && !turn.threadLoaded) {
      parts.push(el("p", { class: "muted", text: "Passage texts load from the conversation's checkpoint…" }));
      if (!view.running) enrichFromThread(turn);
    }
    if ((s.candidates || []).length) {
      parts.push(el("h4", { text: "Candidates considered" }));
      parts.push(el("table", { class: "cands" },
        el("thead", {}, el("tr", {}, el("th", { text: "answer" }), el("th", { text: "confidence" }), el("th", { text: "assumed" }))),
        el("tbody", {}, ...s.candidates.map((c) => el("tr", {}, el("td", { text: c.answer }), el("td", { text: fmt(c.confidence) }),
          el("td", { class: "muted", text: Object.values(c.assumes || {}).join(", ") }))))));
    }
    inspector(...parts);
  }

  function showPropex(id) {
    const p = view.shown.propex;
    const parts = [el("h3", { text: PROPEX_STEPS.find((x) => x[0] === id)[1] })];
    const list = (items) => el("ol", { class: "ev" }, ...items.map((t) => el("li", { text: t })));
    if (id === "facts") parts.push(list(p.facts || []));
    if (id === "kept") parts.push(el("p", { class: "muted", text: p.filter || "" }), list(p.kept || []));
    if (id === "ppr") {
      parts.push(el("p", { class: "muted", text: p.fallback || `PPR seeds: ${(p.seeds || []).join(", ")}` }));
      parts.push(el("ol", { class: "ev" }, ...(p.passages || []).map((x) => el("li", {},
        el("strong", { text: (x.titles || []).join(", ") }), el("div", { class: "scores" }, "PPR score ", el("b", { text: fmt(x.score, 3) }))))));
    }
    inspector(...parts);
  }

  function showCitation(n) {
    const turn = view.shown;
    const c = turn && turn.answer && citationsOf(turn.answer).find((x) => x.n === n);
    if (!c) return;
    const sentences = citedSentences(turn, c.evidence_id);
    inspector(el("h3", { text: `[${c.n}] ${c.title}` }),
      el("p", { class: "muted", text: `${c.kind} ${c.evidence_id} · document ${(c.doc_ids || []).join(", ")}` }),
      el("div", { class: "passage", "data-citation": c.n }, highlighted(c.text || "", sentences)));
  }

  // every supporting sentence a sub-answer took from this passage
  function citedSentences(turn, evidenceId) {
    return Object.values(turn.subs).filter((s) => (s.sources || []).includes(evidenceId) && s.sentence).map((s) => s.sentence);
  }

  function showPassage(id, sentence) {
    const p = graph.passages[id];
    if (!p) return;
    inspector(el("h3", { text: p.title }), el("p", { class: "muted", text: `passage ${id}` }),
      el("div", { class: "passage" }, highlighted(p.text, sentence)));
  }

  // --- the graph around the answer -------------------------------------------------------------------------------
  const W = 600, H = 480; // the SVG's viewBox; positions from the server are in the unit square
  const graph = { nodes: new Map(), edges: new Map(), passages: {}, expanded: new Set(), answers: new Set(),
                  k: 1, tx: 0, ty: 0, index: null, selected: null };
  const svgRoot = $("#graph-svg");

  const GRAPH_NODES = 12, GRAPH_MAX = 60; // nodes drawn at first; "Show more" adds as many again, up to the maximum

  function clearGraph() {
    graph.nodes.clear(); graph.edges.clear(); graph.passages = {}; graph.expanded.clear(); graph.answers.clear();
    graph.selected = null;
    $("#graph-empty").textContent = "Entities and passages the answer used appear here.";
    $("#graph-more").hidden = true;
    renderGraph();
  }

  function answerEntities(turn) {
    const names = [];
    if (turn.graph === "propex") names.push(...(turn.propex.seeds || []));
    for (const id of turn.order) {
      const s = turn.subs[id];
      if (s.answer && s.status === "answered") names.push(s.answer);
      for (const r of s.retrieval || []) names.push(...Object.keys(r.seeds || {}));
    }
    if (turn.answer && turn.answer.short_answer) names.push(...turn.answer.short_answer.split(" / "));
    return [...new Set(names.filter((n) => n && n.length < 120))];
  }

  // The answer's path in reading order: the entities each sub-question names, its answer (the next hop), and last
  // the passage the answer comes from. Names and ids: the service resolves them and lays the path out left to right.
  function answerPath(turn) {
    const named = (question, names) => names.filter((name) => ` ${norm(question)} `.includes(` ${norm(name)} `));
    const path = turn.graph === "propex" ? named(turn.question, turn.propex.seeds || []) : [];
    const answered = turn.order.map((id) => turn.subs[id]).filter((s) => s.status === "answered" && s.answer);
    for (const id of turn.order) {
      const s = turn.subs[id];
      path.push(...named(s.rephrased || s.question || "", (s.retrieval || []).flatMap((r) => Object.keys(r.seeds || {}))));
      if (answered.includes(s)) path.push(s.answer);
    }
    if (!notFound(turn.answer.short_answer)) path.push(...turn.answer.short_answer.split(" / "));
    const last = answered[answered.length - 1];
    const chunks = citationsOf(turn.answer).filter((c) => c.kind === "chunk").map((c) => c.evidence_id);
    path.push(((last && last.sources) || []).concat(chunks)[0]);
    return [...new Set(path.filter((n) => n && n.length < 120))];
  }

  async function loadAnswerGraph(turn, limit = GRAPH_NODES) {
    clearGraph();
    if (!turn || !turn.answer) return;
    const chunks = citationsOf(turn.answer).filter((c) => c.kind === "chunk").map((c) => c.evidence_id);
    const answers = [turn.answer.short_answer, ...turn.order.map((id) => turn.subs[id].answer)].filter(Boolean);
    const index = view.conversation ? view.conversation.index : view.index;
    const query = new URLSearchParams({ entities: answerEntities(turn).join(","), chunks: chunks.join(","),
                                        path: answerPath(turn).join(","), limit });
    try {
      const data = await api(`/v1/indexes/${encodeURIComponent(index)}/graph?${query}`);
      if (view.shown !== turn) return;
      Object.assign(graph, { index, limit });
      answers.forEach((a) => graph.answers.add(norm(a)));
      if (!data.nodes.length) $("#graph-empty").textContent = "This answer used no entity or passage of the index.";
      addToGraph(data);
      fitGraph();
      $("#graph-more").hidden = data.nodes.length < limit || limit >= GRAPH_MAX;
    } catch (err) {
      $("#graph-empty").textContent = `The graph could not be loaded: ${err.message}`;
    }
  }
  $("#graph-more").addEventListener("click", () => loadAnswerGraph(view.shown, graph.limit + GRAPH_NODES));

  function addToGraph(data) {
    for (const n of data.nodes) if (!graph.nodes.has(n.id)) graph.nodes.set(n.id, n);
    for (const e of data.edges) if (!graph.edges.has(e.id)) graph.edges.set(e.id, e);
    Object.assign(graph.passages, data.passages || {});
    renderGraph();
  }

  const onPath = (a, b) => a.path != null && b.path != null && Math.abs(a.path - b.path) === 1;

  function renderGraph() {
    const edges = $("#edges"), nodes = $("#nodes");
    $("#graph-empty").hidden = graph.nodes.size > 0;
    edges.replaceChildren();
    nodes.replaceChildren();
    const layer = { "mentioned-in": 0, synonym: 1, relation: 2 }; // relations drawn last: on top, easiest to pick
    for (const e of [...graph.edges.values()].sort((x, y) => layer[x.kind] - layer[y.kind])) {
      const a = graph.nodes.get(e.source), b = graph.nodes.get(e.target);
      if (!a || !b) continue;
      const focusable = e.kind !== "mentioned-in";
      const label = e.kind === "mentioned-in" ? `${a.label} is mentioned in the passage ${b.label}`
        : `${e.kind} between ${a.label} and ${b.label}${e.facts.length ? `, ${count(e.facts.length, "fact")}` : ""}`;
      const g = svg("g", { class: `gedge ${e.kind}${onPath(a, b) ? " path" : ""}${graph.selected === e.id ? " selected" : ""}`,
                           "data-id": e.id, tabindex: focusable ? "0" : "-1", role: "button", "aria-label": label });
      const coords = { x1: a.x * W, y1: a.y * H, x2: b.x * W, y2: b.y * H };
      g.append(svg("line", { ...coords, class: "vis" }), svg("line", { ...coords, class: "hit" }));
      g.append(Object.assign(svg("title"), { textContent: label }));
      activate(g, () => selectEdge(e.id));
      edges.append(g);
    }
    const drawn = [];
    for (const n of graph.nodes.values()) {
      const classes = ["gnode", n.kind, n.focus ? "focus" : "", n.path != null ? "path" : "", graph.expanded.has(n.id) ? "expanded" : "",
                       n.kind === "entity" && graph.answers.has(norm(n.label)) ? "answer" : "", graph.selected === n.id ? "selected" : ""];
      const label = n.kind === "entity" ? `Entity ${n.label}, in ${count(n.passages, "passage")}` +
        (graph.expanded.has(n.id) ? "" : ": expand its neighbours") : `Passage from ${n.label}`;
      const g = svg("g", { class: classes.filter(Boolean).join(" "), "data-id": n.id, "data-path": n.path, tabindex: "0", role: "button",
                           "aria-label": label, transform: `translate(${(n.x * W).toFixed(1)},${(n.y * H).toFixed(1)})` });
      const r = n.kind === "entity" ? 6 + Math.min(n.passages || 1, 12) * 0.7 : 6;
      if (n.kind === "entity") g.append(svg("circle", { r: r.toFixed(1) }));
      else g.append(svg("rect", { x: -6, y: -6, width: 12, height: 12, rx: 2 }));
      const text = svg("text");
      text.textContent = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
      g.append(text, Object.assign(svg("title"), { textContent: label }));
      activate(g, () => (n.kind === "entity" ? expandEntity(n.id) : selectPassageNode(n.id)));
      nodes.append(g);
      drawn.push({ n, r, text });
    }
    placeLabels(drawn);
    applyTransform();
  }

  // Most important first: the selected node, the answer's path in order, the answer, the question's entities, then
  // the entities in most passages.
  function importance(a, b) {
    const rank = ({ n }) => [graph.selected === n.id ? 0 : 1, n.path ?? 99, graph.answers.has(norm(n.label)) ? 0 : 1,
                             n.focus ? 0 : 1, -(n.passages || 0)];
    const x = rank(a), y = rank(b);
    const i = x.findIndex((v, k) => v !== y[k]);
    return i < 0 ? 0 : x[i] - y[i];
  }

  // Each label goes right of, left of, above or below its node, wherever it covers no other label and no node; a
  // label with no such place is left out (the node still names itself on hover and to a screen reader). Node and
  // text scale together when zoomed, so a placement holds at every zoom.
  function placeLabels(drawn) {
    const pad = 2;
    const taken = drawn.map(({ n, r }) => ({ x: n.x * W - r, y: n.y * H - r, w: 2 * r, h: 2 * r }));
    const free = (b) => !taken.some((o) => b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h);
    for (const { n, r, text } of [...drawn].sort(importance)) {
      const t = text.getBBox(); // drawn at (0, 0): t.y is minus the ascent
      const gap = r + 3, middle = -(t.y + t.height / 2);
      const right = [gap, middle], left = [-gap - t.width, middle];
      const above = [-t.width / 2, -gap - t.y - t.height], below = [-t.width / 2, gap - t.y];
      // the path runs left to right through its nodes: their labels go below and above it, in turn
      const spots = n.path == null ? [right, left, above, below] : n.path % 2 ? [above, below, right, left] : [below, above, right, left];
      const spot = spots.map(([dx, dy]) => ({ dx, dy, box: { x: n.x * W + dx + t.x - pad, y: n.y * H + dy + t.y - pad,
                                                              w: t.width + 2 * pad, h: t.height + 2 * pad } })).find((c) => free(c.box));
      if (!spot) { text.remove(); continue; }
      text.setAttribute("x", spot.dx.toFixed(1));
      text.setAttribute("y", spot.dy.toFixed(1));
      taken.push(spot.box);
    }
  }

  // click, Enter or Space
  function activate(node, action) {
    node.addEventListener("click", (e) => { e.stopPropagation(); action(); });
    node.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.stopPropagation(); action(); }
    });
  }

  function restoreFocus(id) {
    const target = document.querySelector(`#graph-svg [data-id="${CSS.escape(id)}"]`);
    if (target) target.focus({ preventScroll: true });
  }

  async function expandEntity(id) {
    const n = graph.nodes.get(id);
    graph.selected = id;
    view.selected = { type: "graph", id };
    markSelected();
    if (!graph.expanded.has(id)) {
      try {
        const shown = [...graph.nodes.keys()].join(",");
        const data = await api(`/v1/indexes/${encodeURIComponent(graph.index)}/graph/expand?entity=${encodeURIComponent(id)}` +
                               `&shown=${encodeURIComponent(shown)}&x=${n.x}&y=${n.y}&limit=10`);
        graph.expanded.add(id);
        addToGraph(data);
        n.added = data.nodes.length;
        fitGraph();
      } catch (err) {
        inspector(el("p", { class: "status-failed", text: `Could not expand ${n.label}: ${err.message}` }));
        return;
      }
    } else {
      renderGraph();
    }
    restoreFocus(id);
    revealDetails();
    const facts = [...graph.edges.values()].filter((e) => (e.source === id || e.target === id) && e.kind === "relation");
    inspector(el("h3", { text: n.label }),
      el("p", { class: "muted", text: [n.kind, n.type, `mentioned in ${count(n.passages, "passage")}`].filter(Boolean).join(" · ") }),
      n.description ? el("p", { text: n.description }) : null,
      el("p", { "data-expanded": id, text: n.added ? `${count(n.added, "neighbour")} added to the graph.` : "No neighbours to add." }),
      el("h4", { text: "Relations shown" }),
      el("ul", { class: "ev" }, ...facts.map((e) => el("li", {}, el("button", { type: "button", class: "cite", onclick: () => selectEdge(e.id) },
        `${graph.nodes.get(e.source).label} — ${graph.nodes.get(e.target).label}`), el("span", { class: "muted", text: ` ${count(e.facts.length, "fact")}` })))));
  }

  function selectPassageNode(id) {
    graph.selected = id;
    view.selected = { type: "graph", id };
    markSelected();
    renderGraph();
    restoreFocus(id);
    showPassage(id, "");
    revealDetails();
  }

  function selectEdge(id) {
    const e = graph.edges.get(id);
    graph.selected = id;
    view.selected = { type: "graph", id };
    markSelected();
    renderGraph();
    restoreFocus(id);
    revealDetails();
    const a = graph.nodes.get(e.source), b = graph.nodes.get(e.target);
    if (e.kind === "mentioned-in") { showPassage(e.target, ""); return; }
    const parts = [el("h3", { text: `${a.label} — ${b.label}` }), el("p", { class: "muted", text: `${e.kind} · weight ${fmt(e.weight)}` })];
    if (!e.facts.length) parts.push(el("p", { class: "placeholder", text: e.kind === "synonym" ? "Names with close embeddings." : "No facts." }));
    for (const f of e.facts) {
      const box = el("div", { class: "fact" }, el("h4", { text: f.text }));
      for (const pid of f.passages) {
        const p = graph.passages[pid];
        if (!p) continue;
        box.append(el("p", { class: "muted", text: `from ${p.title}` }), el("div", { class: "passage" }, highlighted(p.text, f.sentence)));
      }
      parts.push(box);
    }
    inspector(...parts);
  }

  // pan and zoom: the viewport group's transform, in viewBox units
  function applyTransform() {
    $("#viewport").setAttribute("transform", `translate(${graph.tx.toFixed(1)},${graph.ty.toFixed(1)}) scale(${graph.k.toFixed(4)})`);
  }

  function zoom(factor, cx = W / 2, cy = H / 2) {
    const k = Math.min(8, Math.max(0.2, graph.k * factor));
    graph.tx = cx - (cx - graph.tx) * (k / graph.k);
    graph.ty = cy - (cy - graph.ty) * (k / graph.k);
    graph.k = k;
    applyTransform();
  }

  function fitGraph() {
    if (!graph.nodes.size) { graph.k = 1; graph.tx = graph.ty = 0; applyTransform(); return; }
    const b = $("#viewport").getBBox(), pad = 16; // nodes, edges and labels, before the zoom
    graph.k = Math.min(2, W / (b.width + 2 * pad), H / (b.height + 2 * pad));
    graph.tx = (W - b.width * graph.k) / 2 - b.x * graph.k;
    graph.ty = (H - b.height * graph.k) / 2 - b.y * graph.k;
    applyTransform();
  }

  function toViewBox(event) {
    const rect = svgRoot.getBoundingClientRect();
    const scale = Math.max(W / rect.width, H / rect.height); // preserveAspectRatio meet
    const offsetX = (rect.width - W / scale) / 2, offsetY = (rect.height - H / scale) / 2;
    return { x: (event.clientX - rect.left - offsetX) * scale, y: (event.clientY - rect.top - offsetY) * scale, scale };
  }

  let drag = null;
  svgRoot.addEventListener("pointerdown", (e) => {
    if (e.target.closest(".gnode, .gedge")) return;
    const p = toViewBox(e);
    drag = { x: p.x, y: p.y, tx: graph.tx, ty: graph.ty };
    svgRoot.setPointerCapture(e.pointerId);
    svgRoot.classList.add("dragging");
  });
  svgRoot.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const p = toViewBox(e);
    graph.tx = drag.tx + (p.x - drag.x);
    graph.ty = drag.ty + (p.y - drag.y);
    applyTransform();
  });
  const endDrag = () => { drag = null; svgRoot.classList.remove("dragging"); };
  svgRoot.addEventListener("pointerup", endDrag);
  svgRoot.addEventListener("pointercancel", endDrag);
  svgRoot.addEventListener("wheel", (e) => {
    e.preventDefault();
    const p = toViewBox(e);
    zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });
  svgRoot.addEventListener("keydown", (e) => {
    if (e.target !== svgRoot) return;
    const step = 40;
    const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (moves[e.key]) { graph.tx += moves[e.key][0]; graph.ty += moves[e.key][1]; applyTransform(); e.preventDefault(); }
    else if (e.key === "+" || e.key === "=") { zoom(1.2); e.preventDefault(); }
    else if (e.key === "-") { zoom(1 / 1.2); e.preventDefault(); }
    else if (e.key === "0") { fitGraph(); e.preventDefault(); }
  });
  $("#zoom-in").addEventListener("click", () => zoom(1.2));
  $("#zoom-out").addEventListener("click", () => zoom(1 / 1.2));
  $("#zoom-reset").addEventListener("click", fitGraph);

  // --- reopening a conversation from its link: the plan and evidence come from its checkpoints ---------------------
  // The link may be routed twice at once (the page's start and the key's "change", which Enter fires beside the
  // form's submit): a second load would land after the user picked a turn and show the last one again.
  let opening = null;
  async function openThread(id, index) {
    if (opening === id) return;
    opening = id;
    if (!indexNames.includes(index)) index = view.index;
    try {
      const t = await api(`/v1/threads/${encodeURIComponent(id)}?model=${encodeURIComponent(index)}`);
      const humans = t.messages.filter((m) => m.role === "human").map((m) => m.content);
      const ais = t.messages.filter((m) => m.role === "ai").map((m) => m.content);
      const byTurn = {};
      for (const r of t.subquestions) (byTurn[r.turn] = byTurn[r.turn] || []).push(r);
      const numbers = Object.keys(byTurn).map(Number).sort((a, b) => a - b);
      const turns = [];
      const sameCount = numbers.length === humans.length;
      numbers.forEach((n, i) => {
        const turn = newTurn(sameCount ? humans[i] : `Turn ${n}`, "pankrag");
        const records = n === t.turn && t.plan.length ? t.plan.map((sid) => byTurn[n].find((r) => r.id === sid)).filter(Boolean) : byTurn[n];
        for (const r of records) {
          turn.order.push(r.id);
          turn.subs[r.id] = { id: r.id, status: r.status, evidence: [], sources: [], candidates: [], notes: {} };
          mergeRecord(turn.subs[r.id], r);
        }
        turn.threadLoaded = true;
        if (sameCount) turn.messageAnswer = ais[i];
        turns.push(turn);
      });
      if (!turns.length) turns.push(Object.assign(newTurn(humans[humans.length - 1] || "", "pankrag"), { reopened: true }));
      const last = turns[turns.length - 1];
      if (t.answer) {
        last.answer = { answer: t.answer, short_answer: (ais[ais.length - 1] || t.answer).split(" — ")[0], confidence: t.confidence,
                        citations: t.citations, offline: !!t.offline, extractive: t.extractive, fallbacks: [] };
        last.planner = t.planner;
        if (!sameCount) last.question = humans[humans.length - 1] || last.question;
      }
      const known = loadThreads().find((x) => x.id === id);
      view.conversation = { id, index, title: known ? known.title : (humans[0] || id).slice(0, 80) };
      view.turns = turns;
      view.shown = last;
      view.selected = null;
      setIndex(index);
      renderAll();
      loadAnswerGraph(last);
      saveThread({ id, index, title: view.conversation.title, updated: known ? known.updated : Date.now(), turns: humans.length });
    } catch (err) {
      showBanner(`Could not open the conversation ${id}: ${err.message}`);
    } finally {
      opening = null;
    }
  }

  function routeFromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.get("thread")) openThread(params.get("thread"), params.get("index") || view.index);
  }
  window.addEventListener("hashchange", routeFromHash);

  // --- documents ------------------------------------------------------------------------------------------------
  $("#upload-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const files = $("#files").files;
    if (!files.length) return;
    const form = new FormData();
    for (const f of files) form.append("files", f, f.name);
    submitDocuments(form, `${count(files.length, "file")}: ${[...files].map((f) => f.name).join(", ")}`);
    $("#files").value = "";
  });

  $("#paste-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("#paste-text").value;
    if (!text.trim()) return;
    const title = $("#paste-title").value.trim();
    submitDocuments(JSON.stringify({ documents: [{ text, ...(title ? { title } : {}) }] }), title || "pasted text", "application/json");
    $("#paste-text").value = "";
    $("#paste-title").value = "";
  });

  async function submitDocuments(body, label, contentType) {
    const index = view.index;
    const row = el("li", {}, el("span", { class: "label", text: `${index}: ${label}` }), " ", el("span", { class: "status status-queued", text: "sending…" }));
    $("#jobs").prepend(row);
    const status = $(".status", row);
    const started = performance.now();
    try {
      let job = await api(`/v1/indexes/${encodeURIComponent(index)}/documents`, {
        method: "POST", body, headers: contentType ? { "Content-Type": contentType } : {} });
      row.dataset.job = job.job_id;
      job = await finishedJob(job, (j) => {
        status.className = `status status-${j.status}`;
        const step = j.progress ? ` ${j.progress.step} ${j.progress.done}/${j.progress.total}` : "";
        status.textContent = `${j.status === "queued" ? "queued" : "indexing"}…${step} ${((performance.now() - started) / 1000).toFixed(0)} s`;
      });
      status.className = `status status-${job.status}`;
      status.textContent = job.status === "done"
        ? `done: ${job.added} added, ${job.replaced} replaced, ${job.unchanged} unchanged (${((performance.now() - started) / 1000).toFixed(1)} s)`
        : `failed: ${job.error}`;
      row.dataset.status = job.status;
      refreshDocuments();
      refreshEntities(); // new documents bring new names, and new proposals
    } catch (err) {
      status.className = "status status-failed";
      status.textContent = `failed: ${err.message}`;
      row.dataset.status = "failed";
    }
  }

  // A job of the service (documents, entity decisions) polled until it is done or failed; ``onUpdate`` sees each state.
  async function finishedJob(job, onUpdate = () => {}) {
    while (job.status === "queued" || job.status === "running") {
      onUpdate(job);
      await new Promise((r) => setTimeout(r, 400));
      job = await api(job.status_url);
    }
    return job;
  }

  async function refreshDocuments() {
    if (!view.index) return;
    try {
      const data = await api(`/v1/indexes/${encodeURIComponent(view.index)}/documents`);
      $("#doc-count").textContent = `(${data.documents.length})`;
      $("#doc-list").replaceChildren(...data.documents.slice(0, 500).map((d) => el("li", { title: d.id, text: d.title || d.id })));
    } catch (_) {
      $("#doc-count").textContent = "";
    }
  }

  // --- entities: the merges a person reviews; each decision is a job that rebuilds the graph ---------------------
  const entitiesPath = () => `/v1/indexes/${encodeURIComponent(view.index)}/entities`;
  let entitiesBusy = false;
  // Read the lists only once the panel has been on screen: a question's events paint first.
  let entitiesSeen = false;
  new IntersectionObserver((entries, observer) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    entitiesSeen = true;
    observer.disconnect();
    refreshEntities();
  }).observe($("#entities"));

  async function refreshEntities() {
    if (!view.index || !entitiesSeen) return;
    const index = view.index;
    try {
      const [p, d] = await Promise.all([api(`${entitiesPath()}/proposals`), api(`${entitiesPath()}/decisions`)]);
      if (index !== view.index) return; // another index was chosen meanwhile
      renderProposals(p.proposals, p.total);
      renderDecisions(d.decisions);
    } catch (err) {
      $("#entity-status").textContent = `not loaded: ${err.message}`;
    }
  }

  const typeTag = (type) => (type ? el("span", { class: "badge", text: type }) : null);

  function evidenceOf(name, passages) {
    if (!passages.length) return null;
    return el("div", { class: "where" }, el("h4", { text: `Where “${name}” appears` }),
      el("ul", { class: "ev" }, passages.map((p) => el("li", {},
        el("b", { text: p.title || p.chunk }), el("p", { class: "text" }, highlighted(p.text, [name]))))));
  }

  function renderProposals(proposals, total) {
    $("#proposal-count").textContent = total > proposals.length ? `(the best ${proposals.length} of ${total})` : `(${total})`;
    const items = proposals.map((p) => el("li", { class: "proposal", "data-a": p.a, "data-b": p.b },
      el("div", { class: "pair" }, el("b", { text: p.a }), typeTag(p.a_type), el("span", { class: "muted", text: "and" }),
        el("b", { text: p.b }), typeTag(p.b_type), el("span", { class: "score", text: `score ${fmt(p.score)}` })),
      el("p", { class: "why", text: `Why: ${p.reasons.join("; ")}` }),
      evidenceOf(p.a, p.evidence.a || []), evidenceOf(p.b, p.evidence.b || []),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "accept", text: "Accept", "aria-label": `Accept: merge ${p.a} and ${p.b}`,
          onclick: () => sendDecision("decisions", { decisions: [{ verdict: "merge", a: p.a, b: p.b, why: "reviewed on the web page" }] }, `merge ${p.a} and ${p.b}`) }),
        el("button", { type: "button", class: "reject", text: "Reject", "aria-label": `Reject: keep ${p.a} and ${p.b} apart`,
          onclick: () => sendDecision("decisions", { decisions: [{ verdict: "reject", a: p.a, b: p.b, why: "reviewed on the web page" }] }, `keep ${p.a} and ${p.b} apart`) }))));
    $("#proposals").replaceChildren(...(items.length ? items : [el("li", { class: "placeholder", text: "No merge proposed." })]));
  }

  function decisionLine(d) {
    return el("span", { class: "what" }, el("b", { text: d.verdict === "merge" ? "merged" : "kept apart" }), " ",
      `“${d.a}” and “${d.b}”`, d.why ? el("span", { class: "muted", text: ` (${d.why})` }) : null);
  }

  function renderDecisions(decisions) {
    const inForce = decisions.filter((d) => d.undone === null).reverse(); // the latest first
    const undone = decisions.filter((d) => d.undone !== null).reverse();
    $("#decisions").replaceChildren(...(inForce.length ? inForce.map((d) => el("li", { "data-id": d.id, "data-verdict": d.verdict },
      decisionLine(d), el("button", { type: "button", class: "small undo", text: "Undo", "aria-label": `Undo decision ${d.id}`,
        onclick: () => sendDecision("undo", { decision_id: d.id }, `undo decision ${d.id}`) })))
      : [el("li", { class: "placeholder", text: "No decision yet." })]));
    $("#undone-count").textContent = `(${undone.length})`;
    $("#undone").replaceChildren(...undone.map((d) => el("li", { "data-id": d.id }, decisionLine(d))));
  }

  // One decision at a time: the buttons wait until its job is done and the lists are read again.
  async function sendDecision(path, body, label) {
    if (entitiesBusy) return;
    entitiesBusy = true;
    const panel = $("#entities");
    const status = $("#entity-status");
    panel.setAttribute("aria-busy", "true");
    for (const b of panel.querySelectorAll(".proposals button, .decisions button")) b.disabled = true;
    status.textContent = `${label}: sending…`;
    try {
      let job = await api(`${entitiesPath()}/${path}`, { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
      job = await finishedJob(job, (j) => { status.textContent = `${label}: ${j.status === "queued" ? "queued" : "rebuilding the graph"}…`; });
      status.textContent = job.status === "done" ? `${label}: done` : `${label}: failed: ${job.error}`;
    } catch (err) {
      status.textContent = `${label}: failed: ${err.message}`;
    } finally {
      await refreshEntities();
      for (const b of panel.querySelectorAll(".proposals button, .decisions button")) b.disabled = false;
      entitiesBusy = false;
      panel.removeAttribute("aria-busy");
    }
  }
  $("#entities-refresh").addEventListener("click", refreshEntities);

  // --- start ---------------------------------------------------------------------------------------------------
  let indexNames = [];
  function setIndex(name) {
    view.index = name;
    $("#index").value = name;
    refreshDocuments();
    refreshEntities();
  }
  $("#index").addEventListener("change", () => {
    setIndex($("#index").value);
    if (view.conversation && view.conversation.index !== view.index) newConversation();
  });

  async function start() {
    try {
      const health = await (await fetch("/health")).json();
      indexNames = health.indexes;
    } catch (err) {
      showBanner(`The service did not answer: ${err.message}`);
      return;
    }
    $("#index").replaceChildren(...indexNames.map((n) => el("option", { value: n, text: n })));
    setIndex(indexNames[0]);
    renderAll();
    if (location.hash.includes("thread=")) routeFromHash();
    window.__kgragReady = true;
  }
  start();
})();
