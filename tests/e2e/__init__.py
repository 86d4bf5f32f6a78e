"""End-to-end tests: the CLI and the action as users and the runner start them (INPUT_*,
GITHUB_* env, the local GitHub REST stand-in, the container, a real browser), and the
hostile-input rows (hostile/)."""
