"""Report: what the plugin did, in counters, words and the shadow log."""
