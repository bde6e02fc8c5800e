"""Page weight and first paint of built sites, side by side (issue 26's before / after numbers).

    .venv/bin/python tests/site/page_weight.py NAME=SITE_DIR [NAME=SITE_DIR ...] [--loads 7]

Each site is served over http on 127.0.0.1 (a real transfer, so sizes are what a server sends),
and each page is loaded --loads times in a fresh browser context (an empty cache), alternating
between the sites so that a busy machine slows them alike. Per page it prints the median of the
bytes transferred (transferSize of the page and of every resource it loaded: HTML, CSS, scripts, images) and of the
first-contentful-paint time from the page's performance entries, at 1366x768 and 390x844.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

from site_test_course import CHROMIUM, CHROMIUM_ARGS

PAGES = ("index.html", "lessons/tiny.html", "lessons/tiny-next.html")
VIEWPORTS = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def load_once(browser, url: str, viewport: dict) -> tuple[int, float]:
    context = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 700)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_timeout(300)  # late requests (a lazy image, a search index) still count
    # transferSize: body and headers as they came over the wire, for the page and everything it loaded.
    total, fcp = page.evaluate("""() => {
        const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
        const paint = performance.getEntriesByName('first-contentful-paint')[0];
        return [entries.reduce((sum, e) => sum + e.transferSize, 0), paint ? paint.startTime : -1];
    }""")
    context.close()
    return total, fcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sites", nargs="+", help="NAME=FOLDER")
    parser.add_argument("--loads", type=int, default=7)
    args = parser.parse_args()
    sites = [(name, Path(folder)) for name, folder in (s.split("=", 1) for s in args.sites)]
    servers = {name: serve(folder) for name, folder in sites}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        print(f"{'page':26} {'width':8} " + " ".join(f"{name + ' bytes':>14} {name + ' FCP ms':>14}" for name, _ in sites))
        for page_name in PAGES:
            for width, viewport in VIEWPORTS.items():
                samples = {name: [] for name, _ in sites}
                for _ in range(args.loads):
                    for name, _folder in sites:
                        samples[name].append(load_once(browser, servers[name][1] + page_name, viewport))
                cells = []
                for name, _ in sites:
                    sizes, paints = zip(*samples[name])
                    cells.append(f"{statistics.median(sizes):>14,.0f} {statistics.median(paints):>14.0f}")
                print(f"{page_name:26} {width:8} " + " ".join(cells))
        browser.close()
    for server, _url in servers.values():
        server.shutdown()


if __name__ == "__main__":
    main()
