"""How cases are searched: the Hypothesis strategies and value streams, the profiles' effort and caps, the shared example database, the built-input cache."""
