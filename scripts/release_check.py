#!/usr/bin/env python3
"""Checks that a release tag, the package version and action.yml's image agree.

    scripts/release_check.py v1.2.3

The release workflow (.github/workflows/release.yml) runs it first and pushes the image
under the names it prints, so the image that action.yml runs is the one the release builds.
Checks, each naming the file to fix:
  - the tag is `v` + the package version (`__version__` in src/adk_eval_action/__init__.py,
    which pyproject.toml reads);
  - action.yml runs `docker://ghcr.io/<owner>/adk-eval-action:<that version>`;
  - <owner> is this repository's owner, lower-cased as GHCR requires, when
    GITHUB_REPOSITORY_OWNER is set (in the workflow).
Prints `image=<reference>` and `repository=<reference without tag>` (for $GITHUB_OUTPUT)
and exits 0, or prints what disagrees to stderr and exits 1. Standard library only.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGE_NAME = "adk-eval-action"
IMAGE_LINE = re.compile(r"^\s*image:\s*['\"]?docker://(?P<repository>[^:'\"\s]+):(?P<tag>[^'\"\s]+)",
                        re.M)


def package_version() -> str:
    """`__version__` of src/adk_eval_action/__init__.py."""
    text = (ROOT / "src" / "adk_eval_action" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if not match:
        raise SystemExit("src/adk_eval_action/__init__.py: no __version__ = '...' line")
    return match.group(1)


def action_image() -> tuple[str, str]:
    """(repository, tag) of action.yml's `runs.image: docker://REPOSITORY:TAG`."""
    match = IMAGE_LINE.search((ROOT / "action.yml").read_text(encoding="utf-8"))
    if not match:
        raise SystemExit("action.yml: runs.image is not docker://REPOSITORY:TAG")
    return match.group("repository"), match.group("tag")


def problems(tag: str, owner: str | None) -> list[str]:
    """What disagrees between the tag, the package version, action.yml and the owner."""
    version = package_version()
    repository, image_tag = action_image()
    found = []
    if tag != f"v{version}":
        found.append(f"tag {tag} is not v{version}, the package version "
                     "(src/adk_eval_action/__init__.py)")
    if image_tag != version:
        found.append(f"action.yml runs image tag {image_tag}, not the package version {version}")
    expected = f"ghcr.io/{(owner or '<owner>').lower()}/{IMAGE_NAME}"
    pattern = rf"ghcr\.io/{re.escape(owner.lower()) if owner else '[a-z0-9-]+'}/{IMAGE_NAME}"
    if not re.fullmatch(pattern, repository):
        found.append(f"action.yml runs {repository}, not {expected} (what this release pushes)")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(argv[0], os.environ.get("GITHUB_REPOSITORY_OWNER"))
    for problem in found:
        print(f"release_check: {problem}", file=sys.stderr)
    if found:
        return 1
    repository, tag = action_image()
    print(f"image={repository}:{tag}")
    print(f"repository={repository}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
