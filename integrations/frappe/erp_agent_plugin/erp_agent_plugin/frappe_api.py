"""The executor's ERP API inside Frappe: each allowed call with Frappe's own functions, in the
session of the user who asked (``frappe.session.user``). Permissions, user permissions and field
restrictions are Frappe's; nothing here bypasses them (no ``ignore_permissions``, no SQL).

Needs a bench to run; see docs/channels.md for what the tests cover without one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import frappe  # type: ignore[import-not-found]
from frappe.desk import query_report  # type: ignore[import-not-found]
from frappe.desk.reportview import get_count  # type: ignore[import-not-found]
from frappe.model import workflow  # type: ignore[import-not-found]

from erp_agent_plugin.executor import ErpError


class FrappeApi:
    def call(self, method: str, args: Mapping[str, Any]) -> Any:
        handler = getattr(self, f"_{method}", None)
        if handler is None:
            raise ErpError(f"No such call: {method}", "SpecRefused", 400)
        try:
            return handler(**args)
        except frappe.PermissionError as exc:
            raise ErpError(_message(exc), "PermissionError", 403) from exc
        except frappe.DoesNotExistError as exc:
            raise ErpError(_message(exc), "DoesNotExistError", 404) from exc
        except frappe.TimestampMismatchError as exc:
            raise ErpError(_message(exc), "TimestampMismatchError", 417) from exc
        except frappe.ValidationError as exc:
            raise ErpError(_message(exc), type(exc).__name__, 417) from exc

    def _get_list(self, doctype: str, **kwargs: Any) -> list[dict[str, Any]]:
        return frappe.get_list(doctype, **kwargs)

    def _get_count(self, doctype: str, filters: Any = None) -> int:
        frappe.form_dict.update({"doctype": doctype, "filters": filters})
        return int(get_count())

    def _get_doc(self, doctype: str, name: str) -> dict[str, Any]:
        doc = frappe.get_doc(doctype, name)
        doc.check_permission("read")
        doc.apply_fieldlevel_read_permissions()
        return doc.as_dict()

    def _get_value(self, doctype: str, fieldname: Any, filters: Any = None) -> Any:
        return frappe.client.get_value(doctype, fieldname, filters)

    def _insert(self, doctype: str, values: Mapping[str, Any]) -> dict[str, Any]:
        return frappe.get_doc({**values, "doctype": doctype}).insert().as_dict()

    def _update(self, doctype: str, name: str, values: Mapping[str, Any]) -> dict[str, Any]:
        doc = frappe.get_doc(doctype, name)
        doc.update(dict(values))
        return doc.save().as_dict()

    def _run_doc_method(self, doctype: str, name: str, action: str) -> dict[str, Any]:
        doc = frappe.get_doc(doctype, name)
        doc.submit() if action == "submit" else doc.cancel()
        return doc.as_dict()

    def _delete(self, doctype: str, name: str) -> None:
        frappe.delete_doc(doctype, name)

    def _run_report(
        self, report_name: str, filters: Any = None, ignore_prepared_report: int = 1
    ) -> Any:
        return query_report.run(
            report_name, filters=filters, ignore_prepared_report=bool(ignore_prepared_report)
        )

    def _report_access(self, report_name: str) -> Any:
        return query_report.get_script(report_name)

    def _get_meta(self, doctype: str) -> list[dict[str, Any]]:
        meta = frappe.get_meta(doctype)
        return [
            meta.as_dict(),
            *(frappe.get_meta(d.options).as_dict() for d in meta.get_table_fields()),
        ]

    def _get_transitions(self, doc: Mapping[str, Any]) -> Any:
        return workflow.get_transitions(frappe._dict(doc))

    def _apply_workflow(self, doc: Mapping[str, Any], action: str) -> Any:
        return workflow.apply_workflow(frappe._dict(doc), action).as_dict()

    def _has_permission(
        self, doctype: str, perm_type: str = "read", docname: str | None = None
    ) -> dict[str, bool]:
        return {"has_permission": bool(frappe.has_permission(doctype, perm_type, docname))}

    def _get_roles(self, uid: str | None = None) -> list[str]:
        # Only the asking user's own roles: the relay names no one else.
        return frappe.get_roles(frappe.session.user)

    def _get_versions(self) -> dict[str, Any]:
        from frappe.utils.change_log import get_versions

        return get_versions()

    def _whoami(self) -> str:
        return frappe.session.user

    def _party_details(self, **kwargs: Any) -> Any:
        from erpnext.accounts.party import get_party_details  # type: ignore[import-not-found]

        return get_party_details(**kwargs)

    def _item_details(self, args: Any) -> Any:
        from erpnext.stock.get_item_details import get_item_details  # type: ignore[import-not-found]

        return get_item_details(args)

    def _taxes_and_charges(self, master_doctype: str, master_name: str) -> Any:
        from erpnext.controllers.accounts_controller import get_taxes_and_charges  # type: ignore[import-not-found]

        return get_taxes_and_charges(master_doctype, master_name)

    def _payment_party_details(self, **kwargs: Any) -> Any:
        from erpnext.accounts.doctype.payment_entry.payment_entry import (  # type: ignore[import-not-found]
            get_party_details,
        )

        return get_party_details(**kwargs)

    def _bank_cash_account(self, **kwargs: Any) -> Any:
        from erpnext.accounts.doctype.journal_entry.journal_entry import (  # type: ignore[import-not-found]
            get_default_bank_cash_account,
        )

        return get_default_bank_cash_account(**kwargs)


def _message(exc: Exception) -> str:
    """The ERP's own words: the exception's text, or the last message Frappe logged."""
    text = str(exc)
    if text:
        return text
    logged = getattr(frappe.local, "message_log", None) or []
    return str(logged[-1]) if logged else type(exc).__name__
