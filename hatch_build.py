"""Build-time metadata: the long description with absolute links, and the Project-URLs.

README.md links to docs/ and example_dags/ relatively, which works in the repository but not
on a package index page. Both the links and the Project-URLs come from the one definition of
the project's home, ``REPOSITORY_URL`` in airflow_provider_tronenergy/get_provider_info.py
(read, not imported: the build environment has no Airflow).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

BRANCH = "main"
# An inline Markdown link or image target: ](target)
_LINK = re.compile(r"\]\((?P<target>[^()\s]+)\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def repository_url(root: Path) -> str:
    """``REPOSITORY_URL`` as get_provider_info.py assigns it."""
    source = (root / "airflow_provider_tronenergy" / "get_provider_info.py").read_text("utf-8")
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "REPOSITORY_URL"):
            value = ast.literal_eval(node.value)
            if isinstance(value, str):
                return value.rstrip("/")
    raise ValueError("get_provider_info.py assigns no REPOSITORY_URL string")


def absolute_links(markdown: str, repository: str) -> str:
    """Relative link targets made absolute: files in the repository, anchors on its page."""

    def rewrite(match: re.Match[str]) -> str:
        target = match["target"]
        if _SCHEME.match(target):
            return match[0]
        if target.startswith("#"):
            return f"]({repository}{target})"
        return f"]({repository}/blob/{BRANCH}/{target.removeprefix('./').lstrip('/')})"

    # Code blocks are left as they are: odd fences close the prose parts.
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", markdown,
                     flags=re.MULTILINE | re.DOTALL)
    return "".join(part if _FENCE.match(part) else _LINK.sub(rewrite, part) for part in parts)


class CustomMetadataHook(MetadataHookInterface):
    """Fills the ``readme`` and ``urls`` that pyproject.toml declares dynamic."""

    def update(self, metadata: dict[str, Any]) -> None:
        root = Path(self.root)
        repository = repository_url(root)
        readme = (root / "README.md").read_text(encoding="utf-8")
        metadata["readme"] = {"content-type": "text/markdown",
                              "text": absolute_links(readme, repository)}
        metadata["urls"] = {
            "Homepage": repository,
            "Documentation": f"{repository}/tree/{BRANCH}/docs",
            "Source": repository,
            "Issues": f"{repository}/issues",
            "Changelog": f"{repository}/blob/{BRANCH}/CHANGELOG.md",
        }
