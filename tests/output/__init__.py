"""The output stage: black and its units, the manifest, caches, writing and checking."""
