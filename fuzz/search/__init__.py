"""How cases are searched: the Hypothesis strategies and value streams, the profiles' effort and caps, the replayed corpus, the shared example database, the built-input cache."""
