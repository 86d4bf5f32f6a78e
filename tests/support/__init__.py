"""What the tests share besides conftest.py: the local GitHub REST and artifact
stand-ins, results and evidence builders, the repository layouts of Google's samples, a GFM
parser, the permutation oracle, feature checks of the installed google-adk, a small disk,
and how GitHub's runner starts the action (`runner`: its INPUT_* variables, the podman
build of the image)."""
