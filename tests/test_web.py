"""The web page in a real browser: Debian's chromium driven by Playwright, against the service (uvicorn in this
process) on a copy of the sample index, with an API key configured. Skipped only where chromium or Playwright
cannot be had (`.ci/run` installs chromium)."""

import shutil
from pathlib import Path

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph_store.settings import load_settings
from kgrag import KGRag
from kgrag.server import create_app
from tests.helpers import serve_in_thread

CHROMIUM = "/usr/bin/chromium"
# Playwright's own browser download fails here: drive the system chromium, quietly and offline.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"
KEY = "web-key"
LATENCY_MS = 100


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium package (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        try:
            instance = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as exc:  # noqa: BLE001 - a chromium that cannot start here is a skip, with the reason
            pytest.skip(f"chromium does not start: {str(exc).splitlines()[0]}")
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def site(sample_index, tmp_path_factory):
    """The service on a copy of the sample index (a test adds a document to it)."""
    folder = tmp_path_factory.mktemp("web") / "idx"
    shutil.copytree(sample_index.dir, folder)
    settings = load_settings(environ={}, index_dir=folder, api_keys=[KEY])
    server, base = serve_in_thread(
        create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=InMemorySaver())
    )
    yield base
    server.should_exit = True


@pytest.fixture
def page(browser, site):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(60_000)
    page.goto(site + "/")
    page.wait_for_function("window.__kgragReady === true")
    page.errors = errors
    yield page
    context.close()
    assert not errors, f"errors in the page: {errors}"


def enter_key(page):
    """The server needs a key: the page says so, and the key typed in is kept for the session."""
    page.wait_for_selector("#banner:not([hidden])")
    assert "API key" in page.inner_text("#banner")
    page.fill("#api-key", KEY)
    page.press("#api-key", "Enter")
    page.wait_for_function("document.querySelector('#doc-count').textContent.startsWith('(')")


def ask(page, question, graph="pankrag"):
    page.check(f"input[name=graph][value={graph}]")
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_selector("#answer .short")
    page.wait_for_function("!document.querySelector('#ask').disabled")
    return page.inner_text("#answer .short")


def test_ask_watch_the_plan_fill_in_and_inspect_evidence_citations_and_graph(page):
    enter_key(page)
    assert ask(page, QUESTION) == "Selva"

    # three sub-questions, each filled in from the stream
    nodes = page.locator("#dag .node")
    assert nodes.count() == 3
    answers = {
        n.get_attribute("data-id"): (n.get_attribute("data-status"), n.locator(".ans").inner_text())
        for n in nodes.all()
    }
    assert [a[0] for a in answers.values()] == ["answered"] * 3
    assert answers["1:q1"][1].startswith("Edda Morlund (") and answers["1:q2"][1].startswith("Tarnholm (")
    assert answers["1:q3"][1].startswith("Selva (")
    assert "In which city was Edda Morlund born?" in page.locator('#dag .node[data-id="1:q2"] .re').inner_text()

    # every event of the 3-hop run reached the screen within 100 ms of arriving
    page.wait_for_function("window.__kgragTimings.every(t => t.painted !== null)")
    timings = page.evaluate("window.__kgragTimings")
    per_node = [t for t in timings if t["id"] in answers or t["event"] == "plan"]
    assert {t["id"] for t in per_node} >= {"plan", "1:q1", "1:q2", "1:q3"}
    assert {t["event"] for t in per_node if t["id"] == "1:q3"} >= {
        "subquestion_started",
        "subquestion_rephrased",
        "subquestion_retrieved",
        "subquestion_answered",
    }
    lags = [round(t["painted"] - t["arrived"], 1) for t in per_node]
    print(
        f"\nper-event render latency (ms, arrival to painted frame) over {len(lags)} events: max {max(lags)}, "
        f"median {sorted(lags)[len(lags) // 2]}: {lags}"
    )
    assert max(lags) < LATENCY_MS, lags

    # a sub-question's evidence, opened from the keyboard: R, M, final score, the sentence marked, the candidates
    page.focus('#dag .node[data-id="1:q2"]')
    page.keyboard.press("Enter")
    inspector = page.locator("#inspector")
    assert "1:q2" in inspector.locator("h3").inner_text()
    items = inspector.locator("ol.ev > li")
    thread = page.url.split("#thread=")[1].split("&")[0]
    stored = httpx.get(
        f"{page.url.split('#')[0]}v1/threads/{thread}", headers={"Authorization": f"Bearer {KEY}"}
    ).json()
    q2 = next(s for s in stored["subquestions"] if s["id"] == "1:q2")
    assert items.count() == len(q2["evidence"]) >= 5  # every item the record holds
    scores = items.first.locator(".scores").inner_text()
    assert "R 1.000" in scores and "M 0.8" in scores and "score 0.9" in scores
    page.wait_for_selector("#inspector li.source mark")
    assert inspector.locator("li.source mark").inner_text() == q2["supporting_sentence"]
    assert "born in the port city of Tarnholm" in q2["supporting_sentence"]
    assert inspector.locator("table.cands td").first.inner_text() == "Tarnholm"

    # a citation opens its passage, with the sentence the answer rests on marked
    page.click('#answer .cite[data-n="1"]')
    assert inspector.locator("h3").inner_text() == "[1] Tarnholm"
    marked = inspector.locator(".passage mark").all_inner_texts()
    assert any(m.startswith("The river Selva flows through Tarnholm") for m in marked), marked

    # the graph around the answer: expand an entity, then read an edge's facts
    page.wait_for_selector('#graph-svg .gnode[data-id="selva"]')
    before = page.locator("#graph-svg .gnode").count()
    assert page.locator('#graph-svg .gnode.answer[data-id="selva"]').count() == 1
    page.locator('#graph-svg .gnode[data-id="tarnholm"] circle').click()
    page.wait_for_selector('#inspector [data-expanded="tarnholm"]')
    assert page.locator("#graph-svg .gnode").count() > before
    assert page.locator('#graph-svg .gnode.expanded[data-id="tarnholm"]').count() == 1
    edge = page.locator('#graph-svg .gedge.relation[data-id="r:selva|tarnholm"]')
    edge.focus()
    page.keyboard.press("Enter")
    assert inspector.locator("h3").inner_text() in ("Selva — Tarnholm", "Tarnholm — Selva")
    assert inspector.locator(".fact").count() >= 1 and inspector.locator(".fact .passage").count() >= 1


def test_a_follow_up_stays_in_the_thread_and_its_link_reopens_plan_and_evidence(page):
    enter_key(page)
    assert ask(page, QUESTION) == "Selva"
    page.click(".advanced summary")
    page.select_option("#route", "dense")  # a knob of the advanced panel: every sub-question retrieved densely
    assert ask(page, "Where does the Selva rise?") == "Brannic Mountains"
    assert page.locator('#dag .node[data-id="2:q1"] .route').inner_text() == "dense"
    threads = page.evaluate("JSON.parse(localStorage.getItem('kgrag.threads'))")
    assert len(threads) == 1 and threads[0]["turns"] == 2
    assert page.locator("#turns button").count() == 2
    assert "Selva" in page.inner_text("#transcript")
    link = page.locator("#threads a").first.get_attribute("href")

    # a fresh page of this browser opens the conversation from its link, from the checkpoints
    again = page.context.new_page()
    again.goto(page.url.split("#")[0] + link)
    again.wait_for_function("window.__kgragReady === true")
    enter_key(again)  # the key is kept per tab (sessionStorage); the link opens once it is given
    again.wait_for_selector('#dag .node[data-id="2:q1"][data-status="answered"]')
    assert "Brannic Mountains" in again.inner_text("#answer")
    again.click("#turns button:first-child")
    again.wait_for_selector('#dag .node[data-id="1:q3"][data-status="answered"]')
    again.click('#dag .node[data-id="1:q3"]')
    assert again.locator("#inspector li.source mark").inner_text().startswith("The river Selva flows through Tarnholm")


def test_an_uploaded_document_is_indexed_with_progress_and_answered_from(page):
    enter_key(page)
    count = int(page.inner_text("#doc-count").strip("()"))
    page.set_input_files(
        "#files",
        files=[
            {
                "name": "ilse_varnow.md",
                "mimeType": "text/markdown",
                "buffer": b"# Ilse Varnow\n\nIlse Varnow (1902-1977) was a cartographer. She was born in the mountain village "
                b"of Krennach and drew the first survey maps of the Brannic Mountains.",
            }
        ],
    )
    page.click("#upload-form button")
    job = page.locator("#jobs li").first
    page.wait_for_selector("#jobs li[data-status]", timeout=120_000)
    assert job.get_attribute("data-status") == "done", job.inner_text()
    assert "1 added" in job.inner_text()
    page.wait_for_function(f"document.querySelector('#doc-count').textContent === '({count + 1})'")
    page.fill("#paste-title", "Krennach")
    page.fill("#paste-text", "Krennach is a mountain village in the Brannic Mountains, known for its slate quarries.")
    page.click("#paste-form button")
    page.wait_for_selector("#jobs li:nth-child(1)[data-status]", timeout=120_000)
    assert page.locator("#jobs li").first.get_attribute("data-status") == "done"
    page.wait_for_function(f"document.querySelector('#doc-count').textContent === '({count + 2})'")

    assert ask(page, "Where was Ilse Varnow born?", graph="propex") == "Krennach"
    assert page.locator("#dag .node[data-status=answered]").count() == 3  # the ProPEX pipeline filled in
    page.click('#citations button[data-n="1"]')
    assert "Ilse Varnow" in page.inner_text("#inspector h3")


# --- the JSON behind the graph view (no browser needed) ---------------------------------------------------------


def test_graph_endpoints_give_positioned_nodes_facts_and_passages(site):
    import httpx

    headers = {"Authorization": f"Bearer {KEY}"}
    assert httpx.get(f"{site}/v1/indexes/demo/graph?entities=Selva").status_code == 401
    piece = httpx.get(
        f"{site}/v1/indexes/demo/graph",
        headers=headers,
        timeout=30,
        params={"entities": "Selva,Tarnholm,not an entity", "chunks": "", "limit": 12},
    ).json()
    ids = {n["id"] for n in piece["nodes"]}
    assert ids == {"selva", "tarnholm"} and all(0 <= n["x"] <= 1 and 0 <= n["y"] <= 1 for n in piece["nodes"])
    edge = next(e for e in piece["edges"] if e["id"] == "r:selva|tarnholm")
    fact = edge["facts"][0]
    assert edge["kind"] == "relation" and {fact["subject"], fact["object"]} == {"selva", "tarnholm"}
    assert fact["passages"] and all(p in piece["passages"] for p in fact["passages"])
    assert fact["sentence"] in piece["passages"][fact["passages"][0]]["text"]

    grown = httpx.get(
        f"{site}/v1/indexes/demo/graph/expand",
        headers=headers,
        timeout=30,
        params={"entity": "Selva", "shown": "selva,tarnholm", "x": 0.2, "y": 0.7, "limit": 5},
    ).json()
    new = {n["id"] for n in grown["nodes"]}
    assert grown["entity"] == "selva" and new and not new & {"selva", "tarnholm"}
    assert all(e["source"] in new or e["target"] in new for e in grown["edges"])
    assert sum(n["kind"] == "entity" for n in grown["nodes"]) <= 5
    missing = httpx.get(f"{site}/v1/indexes/demo/graph/expand", headers=headers, params={"entity": "Nobody"})
    assert missing.status_code == 404 and "no entity" in missing.json()["error"]["message"]


def test_graph_endpoint_answers_nothing_with_an_empty_graph_and_lays_the_answers_path_out_first(site):
    headers = {"Authorization": f"Bearer {KEY}"}
    empty = httpx.get(
        f"{site}/v1/indexes/demo/graph", headers=headers, params={"entities": "not an entity", "chunks": ""}
    )
    assert empty.status_code == 200 and empty.json() == {"nodes": [], "edges": [], "passages": {}}

    path = "Halvard Instruments,Edda Morlund,nobody,tarnholm,Selva"
    nodes = httpx.get(
        f"{site}/v1/indexes/demo/graph", headers=headers, timeout=30, params={"path": path, "limit": 8}
    ).json()["nodes"]
    line = sorted((n["path"], n["id"], n["x"], n["y"]) for n in nodes if n["path"] is not None)
    assert [p[:2] for p in line] == [(0, "halvard instruments"), (1, "edda morlund"), (2, "tarnholm"), (3, "selva")]
    assert [p[2] for p in line] == sorted(p[2] for p in line) and len({p[3] for p in line}) == 1  # left to right
    assert len(nodes) <= 8


def test_ask_refuses_bad_knobs_before_streaming(site):
    import httpx

    headers = {"Authorization": f"Bearer {KEY}"}
    for knobs, message in (
        ({"route": "everywhere"}, "'route'"),
        ({"alpha": 1.5}, "'alpha'"),
        ({"alpha": "x"}, "'alpha'"),
    ):
        response = httpx.post(
            f"{site}/v1/ask", headers=headers, json={"question": "Where was Ana Keldor born?", **knobs}
        )
        assert response.status_code == 400 and message in response.json()["error"]["message"]


def test_a_model_draft_shows_as_a_draft_and_a_rejected_one_is_replaced(browser, sample_index, tmp_path_factory):
    """With a model, its answer streams in as a draft; rejected (here: the prompt's example copied), it gives way
    to the extractive answer and the reason; it is never shown as the answer."""
    from tests.helpers import FakeOpenAIServer, Reply

    def model(name, messages):
        prompt = messages[-1]["content"]
        if prompt.startswith("Answer the user's question"):  # slow enough that the draft is on screen for a while
            return Reply("Mira Holt was born in Lindau [1].", delay=0.1, chunk_delay=0.3)
        return '{"answer": "[1]", "evidence": [1]}' if prompt.startswith("Answer the question") else "{}"

    folder = tmp_path_factory.mktemp("web-model") / "idx"
    shutil.copytree(sample_index.dir, folder)
    with FakeOpenAIServer(reply=model) as endpoint:
        settings = load_settings(
            environ={},
            index_dir=folder,
            api_keys=[KEY],
            chat_model="tiny",
            chat_base_url=endpoint.base_url,
            chat_timeout=30,
        )
        server, base = serve_in_thread(
            create_app(settings, {"demo": KGRag(settings=settings)}, checkpointer=InMemorySaver())
        )
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            page.goto(base + "/")
            page.wait_for_function("window.__kgragReady === true")
            enter_key(page)
            page.fill("#question", QUESTION)
            page.click("#ask")
            page.wait_for_selector("#answer .draft-label")
            assert "Draft from the model" in page.inner_text("#answer")
            assert ask_finished(page) == "Selva"
            shown = page.inner_text("#answer")
            assert "Draft" not in shown and "born in Lindau" not in shown  # only the reason names the copied city
            assert "it names Lindau, Mira Holt from the prompt's example" in shown
        finally:
            context.close()
            server.should_exit = True


def ask_finished(page):
    page.wait_for_selector("#answer .short")
    page.wait_for_function("!document.querySelector('#ask').disabled")
    return page.inner_text("#answer .short")
