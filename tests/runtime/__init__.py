"""The static modules of generator/runtime/, tested where they are written (no package generated)."""
