"""Add the field tables of upstream ``generated.proto`` files to
``samplecontroller/apiserver/protobuf_fields.json`` (wire-format facts only: per message, field
number -> [json name, type, opt|rep|map]).

Usage: ``python hack/update_protobuf_fields.py [--verify] <kubernetes/api checkout> <group/version>...``
(``batch/v1 rbac/v1 ...``). Messages already in the table are replaced by the file's.
``--verify`` writes nothing: exit 1 when the table would change, 0 when it is up to date.

The table is kept as plain JSON package data (132 KB; a wheel deflates it to ~15 KB), not
compressed: it needs no dependency, and ``make test`` cannot check it against upstream (the
``.proto`` sources are a kubernetes/api checkout, not a package), so this is run by hand.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "samplecontroller" / "apiserver" / "protobuf_fields.json"
_SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float", "sint32", "sint64"}
_PACKAGE = re.compile(r"^package\s+([\w.]+);", re.M)
_MESSAGE = re.compile(r"^message\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(r"^\s*(optional|repeated|map<\s*string\s*,\s*([.\w]+)\s*>)\s*([.\w]*)\s+(\w+)\s*=\s*(\d+)\s*;", re.M)


def _type(name: str, package: str) -> str:
    if name in _SCALARS:
        return name
    if "." in name:
        return "." + name.lstrip(".")
    return f"{package}.{name}"


def parse(text: str) -> dict[str, dict[str, list[str]]]:
    """The messages of one generated.proto file."""
    package = _PACKAGE.search(text)
    if package is None:
        raise ValueError("no package statement")
    pkg = package.group(1)
    out: dict[str, dict[str, list[str]]] = {}
    for message in _MESSAGE.finditer(text):
        fields: dict[str, list[str]] = {}
        for label, map_value, typ, name, num in _FIELD.findall(message.group(2)):
            kind = "map" if label.startswith("map") else "rep" if label == "repeated" else "opt"
            fields[num] = [name, _type(map_value or typ, pkg), kind]
        out[f"{pkg}.{message.group(1)}"] = fields
    return out


def render(table: dict[str, dict[str, list[str]]]) -> str:
    """The file's text: messages sorted by name, compact JSON."""
    return json.dumps(dict(sorted(table.items())), separators=(",", ":"))


def main(argv: list[str]) -> int:
    verify = "--verify" in argv[1:2]
    args = argv[2:] if verify else argv[1:]
    if len(args) < 2:
        print("usage: python hack/update_protobuf_fields.py [--verify] <kubernetes/api checkout> <group/version>...",
              file=sys.stderr)
        return 2
    root = Path(args[0])
    current = TABLE.read_text()
    table = json.loads(current)
    for gv in args[1:]:
        table.update(parse((root / gv / "generated.proto").read_text()))
    if render(table) == current:
        return 0
    if verify:
        print(f"{TABLE.name} is stale: run python hack/update_protobuf_fields.py {' '.join(args)}", file=sys.stderr)
        return 1
    TABLE.write_text(render(table))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
