"""The turn: stage protocols, the pipeline and its turn state, building the stages from settings."""
