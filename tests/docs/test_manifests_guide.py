"""The manifests guide (issue 40, item 5): it is in the site and says where the effect of every
controller-gen marker a kubebuilder user writes is written here instead."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MARKERS = ["+kubebuilder:rbac", "+kubebuilder:webhook", "+kubebuilder:printcolumn", "+kubebuilder:validation:Minimum",
           "`Enum`", "`Pattern`", "+kubebuilder:validation:Required", "+kubebuilder:validation:XValidation",
           "+kubebuilder:default", "+nullable", "+kubebuilder:storageversion", "+kubebuilder:subresource:status",
           "+kubebuilder:subresource:scale", "+kubebuilder:resource", "+kubebuilder:unservedversion",
           "+kubebuilder:skipversion", "+kubebuilder:pruning:PreserveUnknownFields", "+kubebuilder:selectablefield",
           "+listType", "+groupName", "+kubebuilder:object:root"]


def test_the_guide_maps_every_marker_and_is_in_the_site() -> None:
    guide = (ROOT / "docs" / "guides" / "manifests.md").read_text()
    table = guide.split("## Where each controller-gen marker goes", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `+") or line.startswith("| `")]
    missing = [m for m in MARKERS if not any(m in row.split(" | ")[0] for row in rows)]
    assert not missing, missing
    assert "guides/manifests.md" in (ROOT / "mkdocs.yml").read_text()
    assert all(len(line) <= 88 for block in guide.split("```")[1::2] for line in block.splitlines())
