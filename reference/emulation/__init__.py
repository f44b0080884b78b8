"""Software stand-ins for hardware and library behaviour that this machine cannot run."""
