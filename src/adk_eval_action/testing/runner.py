"""How GitHub's runner starts the action, for tests and benchmarks that start it the same
way: the ``INPUT_*`` variables it sets from action.yml, and the ``podman build`` of the
action's image.

The runner sets one ``INPUT_<NAME>`` for every input the action declares (the name with
spaces as ``_``, upper-cased, hyphens kept): the value the workflow's ``with:`` gives, else
the input's ``default`` ("" when it has none); an expression such as ``${{ github.token }}``
arrives evaluated (the runner's ``Handler.AddInputsToEnvironment``; GitHub's "Metadata
syntax for GitHub Actions"; ``shared/reference/github-actions-contract.md`` §1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import yaml

__all__ = ["TOKEN_EXPRESSION", "podman_build_command", "runner_inputs"]

#: The default of action.yml's ``github_token`` input; the runner passes the job's token.
TOKEN_EXPRESSION = "${{ github.token }}"


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
    network. Behind a TLS-intercepting proxy pip needs the host's CA bundle (``ca_file``;
    None: ``SSL_CERT_FILE``, else Debian's ``/etc/ssl/certs/ca-certificates.crt``): when the
    file exists it is mounted for the build only and named by the ``PIP_CERT`` build
    argument, never copied into the image."""
    command = ["podman", "build", "--network", "host", "-t", image]
    ca = ca_file or os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    if Path(ca).is_file():
        command += ["-v", f"{ca}:/etc/ssl/host-ca.crt:ro",
                    "--build-arg", "PIP_CERT=/etc/ssl/host-ca.crt"]
    return [*command, str(context)]
