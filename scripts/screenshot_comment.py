#!/usr/bin/env python3
"""Renders a PR comment (markdown) to HTML as GitHub would and screenshots it with headless
Chromium, for the docs (the picture in README.md and docs/getting-started.md).

    .venv/bin/python scripts/screenshot_comment.py out/comment.md docs/comment.png

Markdown is rendered with markdown-it-py (CommonMark + GFM tables, raw HTML on, as GitHub's
renderer before its sanitiser; the ``test`` extra installs it), styled like a GitHub comment,
with every ``<details>`` opened so the picture shows the evidence. Chromium comes from
Debian's ``chromium`` package (``apt-get install chromium``); ``--chromium PATH`` names
another binary. The comment's emoji (✅ ❌ ⚠️ 🔴) need a colour emoji font installed:
Debian's ``fonts-noto-color-emoji`` (without it they are blank boxes). Nothing is fetched
from the network (``--disable-background-networking``, no remote fonts or images).

It pictures the PR comment only. The job summary's ``mermaid`` charts are drawn by
GitHub's own Mermaid renderer, which this script does not have (no JavaScript is loaded):
given a summary, they show as their source in a code block.
"""

from __future__ import annotations

import argparse
import html
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

STYLE = """
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif,
       "Noto Color Emoji"; font-size: 14px; line-height: 1.5; color: #1f2328;
       background: #ffffff; margin: 0; padding: 16px; }
.comment { border: 1px solid #d1d9e0; border-radius: 6px; max-width: 1000px; }
.header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
          border-radius: 6px 6px 0 0; color: #59636e; }
.body { padding: 16px; }
h3 { font-size: 1.25em; margin: 16px 0 8px; }
table { border-collapse: collapse; margin: 8px 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 4px 10px; }
th { background: #f6f8fa; font-weight: 600; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 85%;
       background: rgba(129,139,152,0.12); border-radius: 6px; padding: 0.2em 0.4em; }
pre { background: #f6f8fa; border-radius: 6px; padding: 12px 16px; overflow: auto;
      font-size: 85%; line-height: 1.45; }
pre code { background: none; padding: 0; font-size: 100%; white-space: pre-wrap; }
pre code span { display: block; min-height: 1.45em; }
.diff-del { background: #ffebe9; color: #82071e; }
.diff-add { background: #dafbe1; color: #116329; }
.diff-hunk { color: #6639ba; }
details { margin: 4px 0; } summary { cursor: pointer; }
"""


def render_html(markdown: str, title: str) -> str:
    """The comment as a standalone HTML page (GitHub-like style, details open, diff lines
    coloured as GitHub colours a ``diff`` block)."""
    parser = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

    def fence(_renderer, tokens, idx, _options, _env) -> str:  # type: ignore[no-untyped-def]
        token = tokens[idx]
        lines = token.content.rstrip("\n").split("\n")
        if token.info.strip() != "diff":
            return f"<pre><code>{html.escape(token.content)}</code></pre>\n"
        css = {"-": "diff-del", "+": "diff-add", "@": "diff-hunk"}
        spans = [
            f'<span class="{css.get(line[:1], "")}">{html.escape(line) or " "}</span>'
            for line in lines
        ]
        return f"<pre><code>{''.join(spans)}</code></pre>\n"

    parser.add_render_rule("fence", fence)
    body = parser.render(markdown).replace("<details>", "<details open>")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{STYLE}</style></head><body><div class='comment'>"
        f"<div class='header'><b>github-actions</b> bot commented</div>"
        f"<div class='body'>{body}</div></div></body></html>"
    )


def screenshot(page: Path, png: Path, chromium: str, width: int, height: int) -> None:
    """Runs headless Chromium on ``page`` and writes ``png`` (``width`` x ``height`` px).

    Raises:
        subprocess.CalledProcessError: Chromium failed (its output is shown).
    """
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
        f"--screenshot={png.resolve()}",
        page.resolve().as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring). Exit 0 when the picture was written, 2 when
    Chromium or the input is missing."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("comment", type=Path, help="the comment's markdown (comment.md)")
    args.add_argument("png", type=Path, help="where to write the picture")
    args.add_argument("--html", type=Path, help="also keep the HTML page here")
    args.add_argument("--chromium", help="Chromium binary (default: chromium on PATH)")
    args.add_argument("--width", type=int, default=1060)
    args.add_argument("--height", type=int, default=2400)
    options = args.parse_args(argv)
    chromium = options.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("no chromium: apt-get install chromium (or pass --chromium)", file=sys.stderr)
        return 2
    if not options.comment.is_file():
        print(f"{options.comment}: no such file", file=sys.stderr)
        return 2
    page_html = render_html(options.comment.read_text(encoding="utf-8"), options.comment.name)
    with tempfile.TemporaryDirectory() as folder:
        page = options.html or Path(folder) / "comment.html"
        page.write_text(page_html, encoding="utf-8")
        options.png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, options.png, chromium, options.width, options.height)
    print(f"wrote {options.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
