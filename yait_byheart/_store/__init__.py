"""The machinery behind ``yait_byheart.store``: SQL text, dialects, the shared database work."""
