"""The Plugin Index draft (docs/plugin-index/) against the index's own rules, as its PR
check enforces them (agent0ai/a0-plugins scripts/validate_plugin_submission.py), offline:
screenshot URLs are matched to the files in docs/screenshots/ instead of fetched."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest
import yaml
from PIL import Image

from tests.browser.docs_shots import DOCS_SCREENSHOTS, SLOTS
from tests.host.harness import PLUGIN_NAME

REPO = Path(__file__).resolve().parents[1]
DRAFT = REPO / "docs" / "plugin-index"
INDEX_YAML = DRAFT / "index.yaml"
THUMBNAIL = DRAFT / "thumbnail.png"

# The index's rules, from agent0ai/a0-plugins at d857c2f6 (scripts/validate_plugin_submission.py
# and scripts/plugin_resolution.py, which .github/workflows/validate-plugin-pr.yml runs).
ALLOWED_FIELDS = {"title", "description", "github", "tags", "screenshots"}
REQUIRED_FIELDS = {"title", "description", "github"}
ALLOWED_IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".webp"}
THUMBNAIL_MAX_BYTES = 20 * 1024
SCREENSHOT_MAX_BYTES = 2 * 1024 * 1024
INDEX_YAML_MAX_CHARS = 2000
TITLE_MAX_LEN = 50
DESCRIPTION_MAX_LEN = 500
MAX_TAGS = 5
MAX_SCREENSHOTS = 5
PLUGIN_DIRNAME = re.compile(r"^[a-z0-9_]+$")
GITHUB_REPO_URL = re.compile(r"^https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$")
# how scripts/update_index_stars.py reads the version from plugin.yaml
VERSION_LINE = re.compile(r"(?m)^version\s*:\s*(['\"]?)([^'\"#\n]+)\1\s*(?:#.*)?$")
# the fields of Agent Zero's PluginMetadata (helpers/plugins.py), which the installer validates
PLUGIN_YAML_FIELDS = {
    "name",
    "title",
    "description",
    "version",
    "settings_sections",
    "per_project_config",
    "per_agent_config",
    "always_enabled",
}
IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}


@pytest.fixture(scope="module")
def draft() -> dict:
    text = INDEX_YAML.read_text(encoding="utf-8")
    assert len(text) <= INDEX_YAML_MAX_CHARS
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def plugin_yaml() -> dict:
    return yaml.safe_load((REPO / "plugin.yaml").read_text(encoding="utf-8"))


def allowed_tags() -> set[str]:
    lines = (DRAFT / "tags.txt").read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_fields_are_the_allowed_ones_and_the_required_ones_are_filled(draft):
    assert set(draft) <= ALLOWED_FIELDS
    for field in REQUIRED_FIELDS:
        assert isinstance(draft[field], str) and draft[field].strip(), field
    assert len(draft["title"].strip()) <= TITLE_MAX_LEN
    assert len(draft["description"].strip()) <= DESCRIPTION_MAX_LEN


def test_github_is_a_repository_url(draft):
    assert GITHUB_REPO_URL.match(draft["github"].strip())


def test_tags_are_at_most_five_known_ones(draft):
    tags = draft.get("tags", [])
    assert isinstance(tags, list) and all(isinstance(t, str) and t.strip() for t in tags)
    assert len(tags) <= MAX_TAGS and len(set(tags)) == len(tags)
    assert set(tags) <= allowed_tags(), set(tags) - allowed_tags()


def test_the_tag_list_is_names_only():
    tags = allowed_tags()
    assert len(tags) >= 40 and {"memory", "search", "rag"} <= tags
    assert all(re.fullmatch(r"[a-z0-9-]+", t) for t in tags)


def _local_screenshot(url: str, github: str) -> Path:
    """The file in this repository a raw.githubusercontent.com URL of ``github`` names."""
    owner, repo = GITHUB_REPO_URL.match(github).groups()
    parts = urllib.parse.urlparse(url)
    assert parts.scheme in ("http", "https") and parts.netloc == "raw.githubusercontent.com", url
    segments = parts.path.lstrip("/").split("/")
    assert segments[:2] == [owner, repo], f"{url} is not from {github}"
    path = REPO.joinpath(*segments[3:])  # after owner/repo/<branch>
    assert path.parent == DOCS_SCREENSHOTS, url
    return path


def test_every_screenshot_is_a_full_url_to_a_file_here_of_at_most_2_mb(draft):
    shots = draft.get("screenshots", [])
    assert isinstance(shots, list) and 3 <= len(shots) <= MAX_SCREENSHOTS
    for url in shots:
        assert isinstance(url, str) and url.strip()
        suffix = Path(urllib.parse.urlparse(url).path).suffix.lower()
        assert suffix in ALLOWED_IMAGE_EXTS, url
        path = _local_screenshot(url, draft["github"])
        assert path.is_file(), (
            f"{path} is missing: A0_RERANKER_DOC_SCREENSHOTS=1 bash tests/run.sh tests/test_browser_panel.py"
        )
        assert 10_000 < path.stat().st_size <= SCREENSHOT_MAX_BYTES
        with Image.open(path) as image:
            assert image.format == IMAGE_FORMATS[suffix] and image.width >= 800


def test_every_screenshot_slot_is_in_the_draft_and_in_the_readme(draft):
    listed = {_local_screenshot(url, draft["github"]).stem for url in draft["screenshots"]}
    assert listed == set(SLOTS)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for slot in SLOTS:
        assert f"docs/screenshots/{slot}.png" in readme, slot


def test_thumbnail_is_square_and_at_most_20_kb():
    assert THUMBNAIL.suffix in ALLOWED_IMAGE_EXTS
    assert THUMBNAIL.stat().st_size <= THUMBNAIL_MAX_BYTES
    with Image.open(THUMBNAIL) as image:
        assert image.format == "PNG" and image.width == image.height >= 128


def test_thumbnail_is_what_its_script_draws(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_thumbnail", DRAFT / "make_thumbnail.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    fresh = script.main(tmp_path / "thumbnail.png")
    with Image.open(fresh) as new, Image.open(THUMBNAIL) as committed:
        assert new.convert("RGBA").tobytes() == committed.convert("RGBA").tobytes()


def test_plugin_yaml_is_what_the_index_and_the_installer_read(plugin_yaml):
    name = plugin_yaml["name"]
    assert isinstance(name, str) and PLUGIN_DIRNAME.fullmatch(name) and not name.startswith("_")
    assert name == PLUGIN_NAME  # the install folder and the usr.plugins.<name> imports
    assert set(plugin_yaml) <= PLUGIN_YAML_FIELDS
    match = VERSION_LINE.search((REPO / "plugin.yaml").read_text(encoding="utf-8"))
    assert match and match.group(2).strip() == str(plugin_yaml["version"])
    assert plugin_yaml["title"].strip() and len(plugin_yaml["title"]) <= TITLE_MAX_LEN
    assert plugin_yaml["description"].strip()
