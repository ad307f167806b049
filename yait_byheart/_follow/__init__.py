"""Keeping a Memory in step with its journal: appends staged, keyed and stored, and the turns
other writers stored applied (the Memory facade calls it)."""
