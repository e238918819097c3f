"""Alpine.js for the browser harness, at the version Agent Zero ships.

Agent Zero vendors Alpine 3.14.9 (webui/vendor/alpine/alpine.min.js, `version:"3.14.9"`,
agent0ai/agent-zero 2d95cd9). This fetches the same release from the npm registry with
`npm pack` (no CDN), checks the file against a pinned hash and keeps it in
tests/browser/.cache/ (gitignored). Run it ahead of the tests with

    python -m tests.browser.alpine        # prints the path of the cached file

or let the browser tests call `ensure()` themselves.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "3.14.9"
PACKAGE = f"alpinejs@{VERSION}"
MEMBER = "package/dist/cdn.min.js"  # the self-starting build the host imports as a module
SHA256 = "3ed1eed252488921df65e363d6715deb04d7f92aaedb9e52199fdf73cb1e0ad3"
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
NPM_TIMEOUT_S = 180


class AlpineUnavailable(RuntimeError):
    """npm is missing or the registry could not be reached."""


def cached_path(cache_dir: Path = CACHE_DIR) -> Path:
    return cache_dir / f"alpinejs-{VERSION}" / "alpine.min.js"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure(cache_dir: Path = CACHE_DIR) -> Path:
    """The cached alpine.min.js, fetched with `npm pack` when missing or altered."""
    target = cached_path(cache_dir)
    if target.is_file() and _sha256(target) == SHA256:
        return target
    npm = shutil.which("npm")
    if not npm:
        raise AlpineUnavailable("npm is not installed (the browser tests fetch Alpine.js with it)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        try:
            done = subprocess.run(
                [npm, "pack", PACKAGE, "--pack-destination", tmp, "--silent"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise AlpineUnavailable(f"npm pack {PACKAGE} took longer than {NPM_TIMEOUT_S} s") from None
        if done.returncode != 0:
            raise AlpineUnavailable(f"npm pack {PACKAGE} failed: {done.stderr.strip()[-500:]}")
        tarballs = list(Path(tmp).glob("alpinejs-*.tgz"))
        if len(tarballs) != 1:
            raise AlpineUnavailable(f"npm pack {PACKAGE} left {tarballs}")
        with tarfile.open(tarballs[0]) as tar:
            source = tar.extractfile(MEMBER)
            if source is None:
                raise AlpineUnavailable(f"{MEMBER} missing from {tarballs[0].name}")
            staged = Path(tmp) / "alpine.min.js"
            staged.write_bytes(source.read())
        digest = _sha256(staged)
        if digest != SHA256:
            raise AlpineUnavailable(f"{PACKAGE} {MEMBER} has sha256 {digest}, expected {SHA256}")
        os.replace(staged, target)
    return target


if __name__ == "__main__":
    try:
        print(ensure())
    except AlpineUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
