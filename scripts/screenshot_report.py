#!/usr/bin/env python3
"""Screenshots the HTML report (``--html-out``) in headless Chromium, for the docs (the
picture in docs/getting-started.md).

    .venv/bin/python scripts/screenshot_report.py out/report.html docs/report.png

The report is opened from ``file://`` at a deep link to one eval case (``--case``, default
the regressed example's ``weather_paris``), which the report's script opens and scrolls
to: the picture shows the filters and that case's evidence, baseline beside head. Chromium
is Debian's ``chromium`` package (``apt-get install chromium``; ``--chromium PATH`` names
another binary), driven by Playwright (the ``test`` extra), which downloads no browser.
Nothing is fetched from the network.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--hide-scrollbars",
        "--force-device-scale-factor=1"]


def screenshot(report: Path, png: Path, chromium: str, case: str, width: int,
               height: int) -> None:
    """Opens ``report`` at ``#case`` and writes the viewport (``width`` x ``height`` px).

    Raises:
        playwright.sync_api.Error: Chromium failed, or the case is not in the report.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{report.resolve().as_uri()}#{case}")
        page.wait_for_function("() => document.documentElement.classList.contains('ready')")
        page.locator(f"#{case} > .body:not(.pending)").wait_for()
        page.evaluate("id => document.getElementById(id).scrollIntoView()", case)
        page.wait_for_timeout(200)
        png.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(png))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring). Exit 0 when the picture was written, 2 when
    Chromium, Playwright or the report is missing."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("report", type=Path, help="the HTML report (report.html)")
    args.add_argument("png", type=Path, help="where to write the picture")
    args.add_argument("--case", default="case-travel_agent-weather_paris",
                      help="the eval case's deep link (its id in the report)")
    args.add_argument("--chromium", help="Chromium binary (default: chromium on PATH)")
    args.add_argument("--width", type=int, default=1280)
    args.add_argument("--height", type=int, default=900)
    options = args.parse_args(argv)
    chromium = options.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("no chromium: apt-get install chromium (or pass --chromium)", file=sys.stderr)
        return 2
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("no playwright: pip install -e '.[test]'", file=sys.stderr)
        return 2
    if not options.report.is_file():
        print(f"{options.report}: no such file", file=sys.stderr)
        return 2
    screenshot(options.report, options.png, chromium, options.case, options.width,
               options.height)
    print(f"wrote {options.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
