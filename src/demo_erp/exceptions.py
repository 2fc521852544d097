"""Frappe's exception classes, with the HTTP status each one maps to (frappe/exceptions.py)."""

from __future__ import annotations

from typing import Any


class FrappeError(Exception):
    """Base: an error the API turns into a Frappe-shaped JSON body."""

    http_status = 500
    exc_module = "frappe.exceptions"

    def __init__(
        self,
        message: str = "",
        *,
        title: str = "Message",
        messages: list[dict[str, Any]] | None = None,
        error_message: str | None = None,
        indicator: str | None = "red",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.title = title
        self.indicator = indicator
        # Extra msgprints shown before the error (Frappe's message log).
        self.extra_messages = messages or []
        self.error_message = error_message

    @property
    def exc_type(self) -> str:
        return type(self).__name__


class ValidationError(FrappeError):
    http_status = 417


class MandatoryError(ValidationError):
    pass


class LinkValidationError(ValidationError):
    pass


class TimestampMismatchError(ValidationError):
    pass


class DocstatusTransitionError(ValidationError):
    pass


class UpdateAfterSubmitError(ValidationError):
    pass


class UniqueValidationError(ValidationError):
    pass


class LinkExistsError(ValidationError):
    pass


class DataError(ValidationError):
    pass


class CharacterLengthExceededError(ValidationError):
    pass


class FrappeTypeError(ValidationError):
    pass


class WorkflowTransitionError(ValidationError):
    exc_module = "frappe.model.workflow"


class WorkflowStateError(ValidationError):
    exc_module = "frappe.model.workflow"


class WorkflowPermissionError(ValidationError):
    exc_module = "frappe.model.workflow"


class NegativeStockError(ValidationError):
    exc_module = "erpnext.stock.stock_ledger"


class ClosedAccountingPeriod(ValidationError):
    exc_module = "erpnext.accounts.doctype.accounting_period.accounting_period"


class FiscalYearError(ValidationError):
    exc_module = "erpnext.accounts.utils"


class DoesNotExistError(ValidationError):
    http_status = 404


class PermissionError(FrappeError):
    http_status = 403


class AuthenticationError(FrappeError):
    http_status = 401


class SecurityException(FrappeError):
    """Raised on suspicious activity (a locked account); Frappe gives it no status: a 500."""


class SessionExpired(FrappeError):
    http_status = 401


class CSRFTokenError(FrappeError):
    http_status = 400


class InvalidAuthorizationToken(CSRFTokenError):
    pass


class DuplicateEntryError(FrappeError):
    http_status = 409


class NameError(FrappeError):
    """An invalid document name (``frappe.model.naming.validate_name``)."""

    http_status = 409
