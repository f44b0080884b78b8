"""How checks share a machine: pytest-xdist workers pinned to devices, and the thread budget of concurrent checks."""
