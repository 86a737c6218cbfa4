"""Stage 4, commit: black over the units, the format manifest, the local caches, the
package's pyproject.toml, and writing the package atomically or comparing it byte for byte.
Imports the stages below it."""
