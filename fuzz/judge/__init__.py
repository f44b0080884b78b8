"""How an output is judged: the oracle's bound and verdicts, the attribution of a failure to a stage, the failure cards, the official check, the trace of what ran, the path policy."""
