"""The repository agrees with itself: the package's shape (architecture), what ships
(packaging, schemas), the workflows and the README's runnable snippets."""
