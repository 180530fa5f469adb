"""The machine check: tiny models, a real start, MTP proven."""
