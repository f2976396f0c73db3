"""Regenerate the README's screenshots of the web page (plan DAG, evidence panel, graph view) with the browser the
tests use: Debian's chromium driven by Playwright, against the service on the demo index (built if missing).

    .venv/bin/python benchmarks/screenshots.py [--index-dir .kgrag/demo-index] [--out docs] [--plots benchmarks/plots]

Writes web-plan.png, web-evidence.png and web-graph.png (1280x800) into --out and prints each event's render
latency; then the page on a phone (390x844: web-phone-*.png) and at 1366x768 (web-desktop-*.png: the graph, small
talk, a question the documents cannot answer) into --plots (benchmarks/RESULTS.md, "Web page on a phone").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTION = "Which river flows through the city where the founder of Halvard Instruments was born?"
UNANSWERABLE = "Who won the 1998 football world cup?"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 768}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, default=ROOT / ".kgrag" / "demo-index")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--plots", type=Path, default=ROOT / "benchmarks" / "plots")
    args = parser.parse_args()

    from langgraph.checkpoint.memory import InMemorySaver
    from playwright.sync_api import sync_playwright

    from graph_store.settings import load_settings
    from kgrag import KGRag
    from kgrag.server import create_app
    from tests.helpers import serve_in_thread

    settings = load_settings(environ={}, index_dir=args.index_dir)
    rag = KGRag(settings=settings)
    if not (args.index_dir / "manifest.json").exists():
        print(f"building the demo index in {args.index_dir}")
        rag.index(ROOT / "examples" / "corpus")
    server, base = serve_in_thread(create_app(settings, {"demo": rag}, checkpointer=InMemorySaver()))
    args.out.mkdir(parents=True, exist_ok=True)
    args.plots.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
            page.set_default_timeout(60_000)
            page.goto(base + "/")
            page.wait_for_function("window.__kgragReady === true")
            page.fill("#question", QUESTION)
            page.click("#ask")
            page.wait_for_selector("#answer .short")
            page.wait_for_function("window.__kgragTimings.every(t => t.painted !== null)")
            page.wait_for_selector('#graph-svg .gnode[data-id="tarnholm"]')

            page.click('#answer .cite[data-n="1"]')
            page.mouse.move(0, 0)
            page.screenshot(path=args.out / "web-plan.png")

            page.click('#dag .node[data-id="1:q2"]')
            page.wait_for_selector("#inspector li.source mark")
            page.mouse.move(0, 0)
            page.screenshot(path=args.out / "web-evidence.png")

            page.locator('#graph-svg .gnode[data-id="tarnholm"] circle').click()
            page.wait_for_selector('#inspector [data-expanded="tarnholm"]')
            page.focus('#graph-svg .gedge[data-id="r:selva|tarnholm"]')
            page.keyboard.press("Enter")
            page.evaluate("document.querySelector('.graph-panel').scrollIntoView({block: 'end'})")
            page.mouse.move(0, 0)
            page.screenshot(path=args.out / "web-graph.png")

            for t in page.evaluate("window.__kgragTimings"):
                print(f"{t['event']:<24} {t['id']:<8} {t['painted'] - t['arrived']:6.1f} ms")
            written += [args.out / n for n in ("web-plan.png", "web-evidence.png", "web-graph.png")]
            written += phone_and_desktop(browser, base, args.plots)
            browser.close()
    finally:
        server.should_exit = True
    from PIL import Image  # a matplotlib dependency: 256 colours keep a UI screenshot sharp at a third the size

    for path in written:
        with Image.open(path) as image:
            small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        small.save(path, optimize=True)
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_selector("#answer .short, #answer .reply")
    page.wait_for_function("!document.querySelector('#ask').disabled")
    page.wait_for_selector("#graph-svg .gnode, #graph-empty:not([hidden])")


def phone_and_desktop(browser, base: str, out: Path) -> list[Path]:
    """Issue 25's views: the page on a phone (question first, a card's details in view, the graph) and at 1366x768
    (the answer's path in the graph, small talk, a question the documents cannot answer)."""
    shots = []

    def shot(page, name: str) -> None:
        page.mouse.move(0, 0)
        page.screenshot(path=out / name)
        shots.append(out / name)

    page = browser.new_page(viewport=PHONE, device_scale_factor=1)
    page.set_default_timeout(60_000)
    page.goto(base + "/")
    page.wait_for_function("window.__kgragReady === true")
    ask(page, QUESTION)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "web-phone-ask.png")
    page.click('#dag .node[data-id="1:q2"]')
    page.wait_for_selector("#inspector li.source mark")
    shot(page, "web-phone-details.png")
    page.evaluate("document.querySelector('.graph-panel').scrollIntoView({block: 'start'})")
    shot(page, "web-phone-graph.png")
    page.close()

    page = browser.new_page(viewport=DESKTOP, device_scale_factor=1)
    page.set_default_timeout(60_000)
    page.goto(base + "/")
    page.wait_for_function("window.__kgragReady === true")
    ask(page, QUESTION)
    page.evaluate("document.querySelector('.graph-panel').scrollIntoView({block: 'end'})")
    shot(page, "web-desktop-graph.png")
    page.click("#new-thread")
    ask(page, "hello")
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "web-desktop-small-talk.png")
    page.click("#new-thread")
    ask(page, UNANSWERABLE)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "web-desktop-not-found.png")
    page.close()
    return shots


if __name__ == "__main__":
    main()
