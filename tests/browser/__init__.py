"""Real-browser tests of the settings panel: a stand-in of Agent Zero's settings modal
(harness.py) served to Debian's headless Chromium driven by Playwright."""
