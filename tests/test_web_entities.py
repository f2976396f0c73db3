"""The web page's Entities panel in a real browser (Debian's chromium driven by Playwright) against a real
`kgrag serve` process: a proposed merge listed with its evidence, accepted, then in the decisions, and the
question that needs it answered right only after it; another proposal rejected; a decision undone. On a phone
(390x844) and a laptop (1366x768) the panel fits the screen and its buttons are big enough to tap."""

import os
import subprocess
import sys

import pytest

from graph_store.settings import load_settings
from tests.conftest import ROOT
from tests.helpers import free_port, wait_for_http
from tests.test_entities import TMS
from tests.test_web import DESKTOP, PHONE, ask, browser  # noqa: F401 - browser: the module's chromium fixture

pytestmark = pytest.mark.door
TMS_PROPOSAL = f'.proposal[data-a="{TMS}"][data-b="TMS"], .proposal[data-a="TMS"][data-b="{TMS}"]'
VARIANT_PROPOSAL = '.proposal[data-a="Tarnholm"][data-b="Tarnholme"], .proposal[data-a="Tarnholme"][data-b="Tarnholm"]'


@pytest.fixture(scope="module")
def served(tmp_path_factory, embedder, sample_docs):
    """`kgrag serve` (open mode) on the sample corpus, indexed with no automatic merge."""
    from graph_store.index import KnowledgeIndex

    base = tmp_path_factory.mktemp("web-entities")
    index = KnowledgeIndex(
        load_settings(environ={}, index_dir=base / "idx", entity_auto_merge=1.0), embedder=embedder, progress=False
    )
    index.add_documents(sample_docs)
    index.close()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli", "serve", "--index-dir", str(base / "idx"), "--port", str(port)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT), "KGRAG_ENTITY_AUTO_MERGE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=(base / "serve.log").open("a"),
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base_url}/health", process)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=60)


def open_page(browser, url, viewport):  # noqa: F811 - browser is the fixture's value
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(60_000)
    page.goto(url + "/")
    page.wait_for_function("window.__kgragReady === true")
    page.locator("#entities").scroll_into_view_if_needed()  # the panel reads its lists once it is on screen
    page.wait_for_selector("#proposals .proposal")
    return context, page, errors


def wait_idle(page):
    """The decision's job is done and the lists are read again."""
    page.wait_for_function("!document.querySelector('#entities').hasAttribute('aria-busy')")
    assert "failed" not in page.inner_text("#entity-status"), page.inner_text("#entity-status")


def test_review_a_merge_on_the_page_accept_reject_undo(browser, served):  # noqa: F811
    context, page, errors = open_page(browser, served, DESKTOP)
    try:
        tms = page.locator(TMS_PROPOSAL)
        assert tms.count() == 1
        shown = tms.inner_text()
        assert "score 0." in shown and "acronym" in shown
        assert "Tarnholm Maritime Society (TMS)" in shown  # the passage that introduces the short form
        assert "1903" not in ask(
            page, "When was the TMS founded?"
        )  # two entities: the year is in the full name's passage only

        tms.locator("button.accept").click()
        wait_idle(page)
        assert page.locator(TMS_PROPOSAL).count() == 0
        merged = page.locator('#decisions li[data-verdict="merge"]')
        assert merged.count() == 1 and "TMS" in merged.inner_text() and TMS in merged.inner_text()
        assert "1903" in ask(page, "When was the TMS founded?")

        page.locator(VARIANT_PROPOSAL).locator("button.reject").click()
        wait_idle(page)
        assert page.locator(VARIANT_PROPOSAL).count() == 0
        rejected = page.locator('#decisions li[data-verdict="reject"]')
        assert rejected.count() == 1 and "kept apart" in rejected.inner_text()

        rejected.locator("button.undo").click()
        wait_idle(page)
        assert page.locator('#decisions li[data-verdict="reject"]').count() == 0
        assert page.locator(VARIANT_PROPOSAL).count() == 1  # proposed again
        page.click("#undone-box summary")
        assert "Tarnholme" in page.inner_text("#undone")
        assert page.locator('#decisions li[data-verdict="merge"]').count() == 1
        assert not errors, errors
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "laptop"])
def test_the_panel_fits_the_screen_and_its_buttons_can_be_tapped(browser, served, viewport):  # noqa: F811
    context, page, errors = open_page(browser, served, viewport)
    try:
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"{width} px wide in a {viewport['width']} px window"
        panel = page.locator("#entities").bounding_box()
        assert panel and panel["x"] >= 0 and panel["x"] + panel["width"] <= viewport["width"]
        for button in page.locator("#proposals button, #decisions button").all()[:8]:
            box = button.bounding_box()
            assert box and box["height"] >= 44 and box["width"] >= 44, box
            assert box["x"] + box["width"] <= viewport["width"]
        assert not errors, errors
    finally:
        context.close()
