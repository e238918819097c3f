"""Report: what the plugin did, in counters, words and the decision log."""
