"""voirdire inside other tools: every registered protocol as an Inspect AI scorer."""
