"""Stand-in for helpers/skills.py: discovery of SKILL.md files and the host's
frontmatter parsing and validation rules (invalid skills are silently dropped)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import yaml

from helpers import files, subagents

if TYPE_CHECKING:
    from agent import Agent

_NAME_RE = re.compile(r"^[a-z0-9-]+$")


@dataclass
class Skill:
    name: str
    description: str
    path: Path
    skill_md_path: Path
    version: str = ""
    author: str = ""
    tags: List[str] = field(default_factory=list)
    triggers: List[str] = field(default_factory=list)
    allowed_tools: List[str] = field(default_factory=list)
    license: str = ""
    compatibility: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    content: str = ""
    raw_frontmatter: Dict[str, Any] = field(default_factory=dict)


def get_skills_base_dir() -> Path:
    return Path(files.get_abs_path("usr", "skills"))


def get_skill_roots(agent: Agent | None = None) -> List[str]:
    if agent:
        return subagents.get_paths(agent, "skills")
    patterns = [
        "usr/projects/*/.a0proj/agents/*/skills", "usr/projects/*/.a0proj/skills",
        "usr/agents/*/skills", "agents/*/skills", "plugins/*/skills", "usr/plugins/*/skills",
        "plugins/*/agents/*/skills", "usr/plugins/*/agents/*/skills",
    ]
    roots = [files.get_abs_path("skills"), files.get_abs_path("usr/skills")]
    for pattern in patterns:
        roots.extend(files.find_existing_paths_by_pattern(pattern))
    return roots


def discover_skill_md_files(root: Path) -> List[Path]:
    if not root.exists():
        return []
    found = []
    for path in root.rglob("SKILL.md"):
        if not path.is_file():
            continue
        try:
            hidden = any(part.startswith(".") for part in path.relative_to(root).parts)
        except ValueError:
            hidden = ".git" in str(path)
        if not hidden:
            found.append(path)
    return sorted(found, key=str)


def _coerce_list(value: Any) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str):
        parts = value.split(",") if "," in value else re.split(r"\s+", value)
        return [p.strip() for p in parts if p.strip()]
    text = str(value).strip()
    return [text] if text else []


def _normalize_name(name: str) -> str:
    return re.sub(r"\s+", "-", (name or "").strip().lower())


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _parse_frontmatter_fallback(frontmatter_text: str) -> Dict[str, Any]:
    """Line-based `key: value` / `- item` reader the host uses when YAML fails (e.g. an
    unquoted description containing ': ')."""
    data: Dict[str, Any] = {}
    key: Optional[str] = None
    for raw in frontmatter_text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.strip().startswith("#"):
            continue
        pair = re.match(r"^([A-Za-z0-9_.-]+)\s*:\s*(.*)$", line)
        if pair:
            key, value = pair.group(1), pair.group(2).strip()
            data[key] = _unquote(value) if value else []
            continue
        item = re.match(r"^\s*-\s*(.*)$", line)
        if item and key:
            if not isinstance(data.get(key), list):
                data[key] = []
            data[key].append(_unquote(item.group(1).strip()))
    return data


def parse_frontmatter(frontmatter_text: str) -> Tuple[Dict[str, Any], List[str]]:
    if not frontmatter_text.strip():
        return {}, []
    try:
        parsed = yaml.safe_load(frontmatter_text)
    except Exception:
        parsed = None
    if parsed is not None:
        if not isinstance(parsed, dict):
            return {}, ["Frontmatter must be a mapping"]
        return parsed, []
    parsed = _parse_frontmatter_fallback(frontmatter_text)
    return (parsed, []) if parsed else ({}, ["Invalid YAML frontmatter"])


def split_frontmatter(markdown: str) -> Tuple[Dict[str, Any], str, List[str]]:
    """The frontmatter must be the first non-empty content, between '---' lines."""
    lines = (markdown or "").splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.strip() == "---":
            start = i
            break
        if line.strip():
            return {}, (markdown or "").strip(), ["Frontmatter must start at the top of the file"]
    if start is None:
        return {}, (markdown or "").strip(), ["Missing YAML frontmatter"]
    end = next((j for j in range(start + 1, len(lines)) if lines[j].strip() == "---"), None)
    if end is None:
        return {}, (markdown or "").strip(), ["Unterminated YAML frontmatter"]
    fm, errors = parse_frontmatter("\n".join(lines[start + 1:end]).strip())
    return fm, "\n".join(lines[end + 1:]).strip(), errors


def validate_skill(skill: Skill) -> List[str]:
    issues: List[str] = []
    name = (skill.name or "").strip()
    description = (skill.description or "").strip()
    if not name:
        issues.append("Missing required field: name")
    else:
        if not 1 <= len(name) <= 64:
            issues.append("name must be 1-64 characters")
        if not _NAME_RE.match(name):
            issues.append("name must use lowercase letters, numbers, and hyphens only")
        if name.startswith("-") or name.endswith("-"):
            issues.append("name must not start or end with a hyphen")
        if "--" in name:
            issues.append("name must not contain consecutive hyphens")
    if not description:
        issues.append("Missing required field: description")
    elif len(description) > 1024:
        issues.append("description must be <= 1024 characters")
    if skill.compatibility and len(skill.compatibility) > 500:
        issues.append("compatibility must be <= 500 characters")
    return issues


def skill_from_markdown(skill_md_path: Path, *, include_content: bool = False,
                        validate: bool = True) -> Optional[Skill]:
    try:
        text = skill_md_path.read_text(encoding="utf-8", errors="replace")
    except Exception:
        return None
    fm, body, errors = split_frontmatter(text)
    if errors:
        return None
    meta = fm.get("metadata")
    skill = Skill(
        name=str(fm.get("name") or fm.get("skill") or "").strip(),
        description=str(fm.get("description") or fm.get("when_to_use") or fm.get("summary") or "").strip(),
        path=Path(files.normalize_a0_path(str(skill_md_path.parent))),
        skill_md_path=skill_md_path,
        version=str(fm.get("version") or "").strip(),
        author=str(fm.get("author") or "").strip(),
        tags=_coerce_list(fm.get("tags") or fm.get("tag")),
        triggers=_coerce_list(fm.get("triggers") or fm.get("trigger_patterns")
                              or fm.get("trigger") or fm.get("activation")),
        allowed_tools=_coerce_list(fm.get("allowed-tools") or fm.get("allowed_tools") or fm.get("tools")),
        license=str(fm.get("license") or "").strip(),
        compatibility=str(fm.get("compatibility") or "").strip(),
        metadata=dict(meta) if isinstance(meta, dict) else {},
        raw_frontmatter=fm if include_content else {},
        content=body if include_content else "",
    )
    if validate and validate_skill(skill):
        return None
    return skill


def list_skills(agent: Agent | None = None, include_content: bool = False) -> List[Skill]:
    skills = [
        s for root in get_skill_roots(agent)
        for md in discover_skill_md_files(Path(root))
        if (s := skill_from_markdown(md, include_content=include_content))
    ]
    if not agent:
        return skills
    unique: Dict[str, Skill] = {}
    for s in skills:  # earlier roots win
        key = _normalize_name(s.name) or _normalize_name(s.path.name)
        if key and key not in unique:
            unique[key] = s
    return list(unique.values())


def find_skill(skill_name: str, agent: Agent | None = None, include_content: bool = False) -> Optional[Skill]:
    target = _normalize_name(skill_name)
    if not target:
        return None
    for root in get_skill_roots(agent):
        for md in discover_skill_md_files(Path(root)):
            s = skill_from_markdown(md, include_content=include_content)
            if s and target in (_normalize_name(s.name), _normalize_name(s.path.name)):
                return s
    return None


def load_skill_for_agent(skill_name: str, agent: Agent | None = None) -> str:
    """What the host injects after skills_tool:load (the file tree is a plain listing here)."""
    skill = find_skill(skill_name, agent=agent, include_content=True)
    if not skill:
        return f"Error: skill '{skill_name}' not found"
    lines = [f"Skill: {skill.name}", f"Path: {skill.path}"]
    for label, value in (("Version", skill.version), ("Author", skill.author),
                         ("License", skill.license), ("Compatibility", skill.compatibility),
                         ("Tags", ", ".join(skill.tags)), ("Allowed tools", ", ".join(skill.allowed_tools)),
                         ("Triggers", ", ".join(skill.triggers))):
        if value:
            lines.append(f"{label}: {value}")
    if skill.description:
        lines += ["", "Description:", skill.description]
    lines += ["", "Content (SKILL.md body):", skill.content.strip() or "(empty)", ""]
    folder = skill.skill_md_path.parent
    listing = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    lines += (["Files (use skills_tool method=read_file to open):", *listing]
              if listing else ["No additional files found."])
    return "\n".join(lines)
