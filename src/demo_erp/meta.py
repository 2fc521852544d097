"""DocType metadata: loaded once from the YAML files in ``doctypes/``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

NUMERIC_TYPES = frozenset({"Currency", "Float", "Percent", "Int", "Check"})
INT_TYPES = frozenset({"Int", "Check"})
TABLE_TYPES = frozenset({"Table", "Table MultiSelect"})
DATE_TYPES = frozenset({"Date", "Datetime"})
STANDARD_FIELDS = (
    "name",
    "owner",
    "creation",
    "modified",
    "modified_by",
    "docstatus",
    "idx",
)
CHILD_STANDARD_FIELDS = ("parent", "parentfield", "parenttype")
RIGHTS = {
    "r": "read",
    "w": "write",
    "c": "create",
    "d": "delete",
    "s": "submit",
    "x": "cancel",
    "p": "report",
    "e": "export",
}
FIELD_TYPES = (
    "Small Text", "Long Text", "Text Editor", "Table MultiSelect", "Dynamic Link", "Attach Image",
    "Currency", "Float", "Percent", "Int", "Check", "Data", "Link", "Select", "Date", "Datetime",
    "Time", "Text", "Code", "Table", "Attach", "Password",
)  # fmt: skip
_FIELD_RE = re.compile(
    r"^(?P<type>" + "|".join(FIELD_TYPES) + r")(?:\((?P<options>[^)]*)\))?(?P<flags>(?:\s+\S+)*)$"
)


@dataclass(frozen=True)
class DocField:
    fieldname: str
    fieldtype: str
    label: str
    options: str = ""
    reqd: bool = False
    read_only: bool = False
    unique: bool = False
    in_list_view: bool = False
    in_standard_filter: bool = False
    is_custom_field: bool = False
    permlevel: int = 0
    allow_on_submit: bool = False
    default: str | None = None
    length: int = 0
    # Frappe's "Ignore User Permissions": a user restricted to some records of the target still
    # sees documents linking elsewhere (an employee's own record, whoever they report to).
    ignore_user_permissions: bool = False

    @property
    def is_table(self) -> bool:
        return self.fieldtype in TABLE_TYPES

    @property
    def select_options(self) -> list[str]:
        return self.options.split("\n") if self.fieldtype == "Select" else []

    def as_dict(self, idx: int) -> dict[str, Any]:
        return {
            "fieldname": self.fieldname,
            "label": self.label,
            "fieldtype": self.fieldtype,
            "options": self.options or None,
            "reqd": int(self.reqd),
            "read_only": int(self.read_only),
            "unique": int(self.unique),
            "in_list_view": int(self.in_list_view),
            "in_standard_filter": int(self.in_standard_filter),
            "permlevel": self.permlevel,
            "allow_on_submit": int(self.allow_on_submit),
            "default": self.default,
            "length": self.length,
            "is_custom_field": int(self.is_custom_field),
            "ignore_user_permissions": int(self.ignore_user_permissions),
            "idx": idx,
        }


@dataclass(frozen=True)
class DocPerm:
    role: str
    permlevel: int
    rights: frozenset[str]
    if_owner: bool

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "permlevel": self.permlevel}
        out.update({right: int(right in self.rights) for right in RIGHTS.values()})
        out["if_owner"] = int(self.if_owner)
        return out


@dataclass(frozen=True)
class DocType:
    name: str
    module: str
    fields: tuple[DocField, ...]
    permissions: tuple[DocPerm, ...] = ()
    istable: bool = False
    is_submittable: bool = False
    is_tree: bool = False
    autoname: str = "hash"
    title_field: str = ""
    # Frappe's "Allow Rename" and the fields a link search matches besides the name.
    allow_rename: bool = False
    search_fields: tuple[str, ...] = ()
    _by_name: dict[str, DocField] = field(default_factory=dict, compare=False, repr=False)

    @property
    def table_name(self) -> str:
        return f"tab{self.name}"

    def get_field(self, fieldname: str) -> DocField | None:
        return self._by_name.get(fieldname)

    @property
    def data_fields(self) -> list[DocField]:
        return [f for f in self.fields if not f.is_table]

    @property
    def table_fields(self) -> list[DocField]:
        return [f for f in self.fields if f.is_table]

    @property
    def column_names(self) -> list[str]:
        standard = list(STANDARD_FIELDS)
        if self.istable:
            standard += list(CHILD_STANDARD_FIELDS)
        return standard + [f.fieldname for f in self.data_fields]

    def is_valid_column(self, fieldname: str) -> bool:
        if fieldname in STANDARD_FIELDS:
            return True
        if self.istable and fieldname in CHILD_STANDARD_FIELDS:
            return True
        f = self._by_name.get(fieldname)
        return f is not None and not f.is_table

    def link_fields(self, target: str) -> list[DocField]:
        return [f for f in self.fields if f.fieldtype == "Link" and f.options == target]

    def restricted_links(self, target: str) -> list[DocField]:
        """The links to ``target`` a user permission on it restricts."""
        return [f for f in self.link_fields(target) if not f.ignore_user_permissions]

    def as_dict(self) -> dict[str, Any]:
        return {
            "doctype": "DocType",
            "name": self.name,
            "module": self.module,
            "istable": int(self.istable),
            "issingle": 0,
            "is_submittable": int(self.is_submittable),
            "is_tree": int(self.is_tree),
            "autoname": self.autoname,
            "title_field": self.title_field or None,
            "allow_rename": int(self.allow_rename),
            "search_fields": ",".join(self.search_fields) or None,
            "sort_field": "modified",
            "sort_order": "DESC",
            "fields": [f.as_dict(i + 1) for i, f in enumerate(self.fields)],
            "permissions": [p.as_dict() for p in self.permissions],
        }


def _label(fieldname: str) -> str:
    return fieldname.replace("_", " ").title()


def parse_field(fieldname: str, spec: str) -> DocField:
    match = _FIELD_RE.match(spec.strip())
    if not match:
        raise ValueError(f"cannot parse field {fieldname!r}: {spec!r}")
    fieldtype = match["type"].strip()
    options = (match["options"] or "").replace("|", "\n")
    kwargs: dict[str, Any] = {}
    for flag in (match["flags"] or "").split():
        if flag.startswith("default="):
            kwargs["default"] = flag.split("=", 1)[1].replace("_", " ")
        elif flag.startswith("len="):
            kwargs["length"] = int(flag.split("=", 1)[1])
        elif flag.startswith("perm"):
            kwargs["permlevel"] = int(flag[4:])
        elif flag.startswith("label="):
            kwargs["label"] = flag.split("=", 1)[1].replace("_", " ")
        else:
            key = {
                "reqd": "reqd",
                "ro": "read_only",
                "unique": "unique",
                "list": "in_list_view",
                "filter": "in_standard_filter",
                "custom": "is_custom_field",
                "submit": "allow_on_submit",
                "nouperm": "ignore_user_permissions",
            }.get(flag)
            if key is None:
                raise ValueError(f"unknown flag {flag!r} on field {fieldname!r}")
            kwargs[key] = True
    if "length" not in kwargs and fieldtype == "Data":
        kwargs["length"] = 140
    label = kwargs.pop("label", None) or _label(fieldname)
    return DocField(fieldname, fieldtype, label, options, **kwargs)


def _parse_perms(raw: dict[str, str]) -> tuple[DocPerm, ...]:
    perms = []
    for key, letters in raw.items():
        role, _, level = key.partition("@")
        unknown = set(letters) - set(RIGHTS) - {"o"}
        if unknown:
            raise ValueError(f"unknown permission letters {unknown} for {key!r}")
        rights = frozenset(RIGHTS[c] for c in letters if c in RIGHTS)
        perms.append(DocPerm(role, int(level or 0), rights, "o" in letters))
    return tuple(perms)


def _build(name: str, raw: dict[str, Any]) -> DocType:
    fields = tuple(parse_field(fn, str(spec)) for fn, spec in (raw.get("fields") or {}).items())
    doctype = DocType(
        name=name,
        module=raw["module"],
        fields=fields,
        permissions=_parse_perms(raw.get("permissions") or {}),
        istable=bool(raw.get("istable")),
        is_submittable=bool(raw.get("is_submittable")),
        is_tree=bool(raw.get("is_tree")),
        autoname=raw.get("autoname", "hash"),
        title_field=raw.get("title_field", ""),
        allow_rename=bool(raw.get("allow_rename")),
        search_fields=tuple(
            f.strip() for f in str(raw.get("search_fields") or "").split(",") if f.strip()
        ),
    )
    doctype._by_name.update({f.fieldname: f for f in fields})
    return doctype


@cache
def all_doctypes() -> dict[str, DocType]:
    """Every DocType, by name. Validated: links and tables point at known DocTypes."""
    found: dict[str, DocType] = {}
    folder = resources.files("demo_erp") / "doctypes"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        for name, raw in data.items():
            if name in found:
                raise ValueError(f"DocType {name!r} is defined twice")
            found[name] = _build(name, raw)
    for doctype in found.values():
        for f in doctype.fields:
            if f.fieldtype in ("Link", "Table") and f.options not in found:
                raise ValueError(f"{doctype.name}.{f.fieldname} points at unknown {f.options!r}")
            if f.fieldtype == "Dynamic Link" and doctype.get_field(f.options) is None:
                raise ValueError(f"{doctype.name}.{f.fieldname} names no field {f.options!r}")
        for name in doctype.search_fields:
            if doctype.get_field(name) is None:
                raise ValueError(f"{doctype.name}: search field {name!r} is not a field")
    return found


def get_meta(doctype: str) -> DocType | None:
    return all_doctypes().get(doctype)
