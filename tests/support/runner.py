"""How GitHub's runner starts the action, for tests and benchmarks that start it the same
way: the ``INPUT_*`` variables it sets from action.yml, and the ``podman build`` of the
action's image.

The runner sets one ``INPUT_<NAME>`` for every input the action declares (the name with
spaces as ``_``, upper-cased, hyphens kept): the value the workflow's ``with:`` gives, else
the input's ``default`` ("" when it has none); an expression such as ``${{ github.token }}``
arrives evaluated (the runner's ``Handler.AddInputsToEnvironment``,
https://github.com/actions/runner/blob/main/src/Runner.Worker/Handlers/Handler.cs; GitHub's
"Metadata syntax for GitHub Actions",
https://docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax#inputs).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import yaml

__all__ = [
    "BUILD_LABEL",
    "TOKEN_EXPRESSION",
    "podman_build_command",
    "remove_podman_image",
    "runner_inputs",
]

#: The default of action.yml's ``github_token`` input; the runner passes the job's token.
TOKEN_EXPRESSION = "${{ github.token }}"
#: Label of every image a :func:`podman_build_command` build makes, the stages' included
#: (buildah labels them all); its value is the tag built.
BUILD_LABEL = "adk-eval-action.build"


def runner_inputs(
    action_yml: Path, given: Mapping[str, str] | None = None, token: str = "",
) -> dict[str, str]:
    """``INPUT_<NAME>`` -> value for every input of ``action_yml`` (a path to action.yml):
    ``given[name]`` (input names as action.yml spells them) or else the input's default,
    with :data:`TOKEN_EXPRESSION` evaluated to ``token``.

    Raises:
        KeyError: a name of ``given`` that action.yml does not declare (a workflow's
            ``with:`` key the runner would only warn about, a typo in a test).
        OSError, yaml.YAMLError: ``action_yml`` is unreadable.
    """
    declared = yaml.safe_load(action_yml.read_text(encoding="utf-8"))["inputs"]
    given = dict(given or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise KeyError(f"not inputs of {action_yml.name}: {', '.join(unknown)}")
    env = {}
    for name, spec in declared.items():
        value = given.get(name, str(spec.get("default", "")))
        variable = "INPUT_" + name.replace(" ", "_").upper()
        env[variable] = token if value == TOKEN_EXPRESSION else value
    return env


def podman_build_command(
    image: str, context: Path, ca_file: Path | str | None = None,
) -> list[str]:
    """``podman build`` of the Dockerfile in ``context`` tagged ``image``, on the host's
    network, every image it makes labelled :data:`BUILD_LABEL` = ``image`` (so that
    :func:`remove_podman_image` finds the stages' images too). Behind a TLS-intercepting
    proxy pip needs the host's CA bundle (``ca_file``; None: ``SSL_CERT_FILE``, else
    Debian's ``/etc/ssl/certs/ca-certificates.crt``): when the file exists it is mounted
    for the build only and named by the ``PIP_CERT`` build argument, never copied into the
    image."""
    command = ["podman", "build", "--network", "host", "-t", image,
               "--label", f"{BUILD_LABEL}={image}"]
    ca = ca_file or os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    if Path(ca).is_file():
        command += ["-v", f"{ca}:/etc/ssl/host-ca.crt:ro",
                    "--build-arg", "PIP_CERT=/etc/ssl/host-ca.crt"]
    return [*command, str(context)]


def remove_podman_image(image: str) -> list[str]:
    """Removes ``image`` and the images its :func:`podman_build_command` builds left (the
    Dockerfile's thrown-away stages, cached layers: about 2 GB besides the image), and
    nothing else: an image some other image or container still uses is kept. Returns the
    ids of the images labelled for ``image`` that are still there (empty when all went).

    Never raises for podman's refusals; raises OSError when podman cannot be started.
    """
    label = f"label={BUILD_LABEL}={image}"
    for command in (["podman", "rmi", "--ignore", image],
                    ["podman", "image", "prune", "--force", "--filter", label]):
        subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    left = subprocess.run(["podman", "images", "--all", "--quiet", "--filter", label],
                          capture_output=True, text=True, timeout=300, check=False)
    return left.stdout.split()
