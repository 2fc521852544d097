"""The ASGI application: request parsing, authentication and routing, as Frappe does them."""

from __future__ import annotations

import asyncio
import base64
import binascii
import html
import json
import threading
import urllib.parse
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from demo_erp import auth, db, documents, oauth, query, records
from demo_erp.api import (
    desk,
    erpnext_methods,  # noqa: F401 - registers ERPNext's form helpers
    hrms_methods,  # noqa: F401 - registers hrms's self-service helpers
    payment_methods,  # noqa: F401 - registers the Payment Entry form's helpers
    previews,  # noqa: F401 - registers the ledger previews and the linked documents
    search,  # noqa: F401 - registers the link search
    v2,
)
from demo_erp.api.methods import METHODS, doctype_bundle, list_args, run_doc_method
from demo_erp.api.responses import (
    FrappeJSON,
    error_response,
    no_nulls,
    unexpected_error,
    with_messages,
)
from demo_erp.context import ADMINISTRATOR, GUEST, Ctx, Settings, as_user
from demo_erp.exceptions import (
    AuthenticationError,
    DoesNotExistError,
    FrappeError,
    InvalidAuthorizationToken,
    PermissionError,
    SecurityException,
    ValidationError,
)

UNSAFE = frozenset({"POST", "PUT", "DELETE", "PATCH"})


class _Connections(threading.local):
    conn: Any = None


class DemoERP:
    """Holds settings and one SQLite connection per worker thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._local = _Connections()
        self.login_attempts = auth.LoginAttemptTracker(
            settings.allow_consecutive_login_attempts, settings.allow_login_after_fail
        )

    def conn(self) -> Any:
        if self._local.conn is None:
            self._local.conn = db.connect(self.settings.db_path)
        return self._local.conn


class BadJSON(Exception):
    """The body claimed to be JSON but was not: Frappe answers with a bare 500."""


async def _form_dict(request: Request) -> dict[str, Any]:
    """Frappe's make_form_dict: a JSON object body is the args; else query + form fields."""
    args: dict[str, Any] = dict(request.query_params)
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    if body and "application/json" in content_type:
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise BadJSON(str(exc)) from exc
        if isinstance(data, dict):
            args.update(data)
        else:
            args["data"] = data
    elif body and "application/x-www-form-urlencoded" in content_type:
        args.update(dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True)))
    elif body and "multipart/form-data" in content_type:
        form = await request.form()
        args.update({k: v for k, v in form.items() if isinstance(v, str)})
    args.pop("_", None)
    return args


def _authenticate(app: DemoERP, request: Request, args: dict[str, Any]) -> tuple[str, str | None]:
    """(user, sid). Bad credentials in a header are 401; no or stale credentials are Guest."""
    conn = app.conn()
    header = request.headers.get("authorization")
    if header:
        parts = header.split(" ")
        if len(parts) != 2:
            raise AuthenticationError("Invalid authorization header")
        scheme, token = parts[0].lower(), parts[1]
        if scheme == "basic":
            try:
                token = base64.b64decode(token, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError) as exc:
                raise InvalidAuthorizationToken("Invalid Authorization Token") from exc
        if scheme in ("token", "basic"):
            key, _, secret = token.partition(":")
            user = auth.user_for_api_key(conn, key, secret) if key and secret else None
            if user is None:
                raise AuthenticationError("Invalid API key or secret")
            return user, None
        if scheme == "bearer":
            user = oauth.bearer_user(conn, token)
            if user is None:  # unknown, expired or revoked: Frappe's validate_auth gives 401
                raise AuthenticationError("Invalid bearer token")
            return user, None
        raise AuthenticationError("Invalid authorization header")
    sid = request.cookies.get("sid") or args.get("sid")
    if sid and sid != "Guest":
        user = auth.session_user(conn, str(sid))
        if user:
            return user, str(sid)
    return GUEST, None


def _ctx(app: DemoERP, user: str) -> Ctx:
    return as_user(app.conn(), app.settings, user)


def _login(app: DemoERP, args: dict[str, Any]) -> Response:
    conn = app.conn()
    usr, pwd = args.get("usr"), args.get("pwd")
    if not usr or not pwd:
        return _login_failed("Incomplete login details")
    if len(str(pwd)) > 512:
        return _login_failed("Password size exceeded the maximum allowed size")
    user = str(usr)
    row = conn.execute(
        'select name, full_name, enabled from "tabUser" where name = ?', (user,)
    ).fetchone()
    if row is None and app.settings.allow_login_using_user_name:
        # Frappe's User.find_by_credentials: a username stands for its user.
        row = conn.execute(
            'select name, full_name, enabled from "tabUser" where username = ?', (user,)
        ).fetchone()
        if row is not None:
            user = str(row["name"])
    if user != ADMINISTRATOR and (row is None or not row["enabled"]):
        return _login_failed(
            "User disabled or missing" if row is not None else "Invalid login credentials"
        )
    # Frappe's LoginManager: a locked account is refused before its password is looked at,
    # and Administrator is never locked out.
    tracked = user != ADMINISTRATOR
    if tracked and not app.login_attempts.is_user_allowed(user):
        raise SecurityException(
            "Your account has been locked and will resume after "
            f"{app.settings.allow_login_after_fail} seconds"
        )
    if not auth.check_password(conn, user, str(pwd)):
        if tracked:
            app.login_attempts.add_failure_attempt(user)
        return _login_failed("Invalid login credentials")
    if tracked:
        app.login_attempts.add_success_attempt(user)
    with documents.transaction(conn):
        sid = auth.new_session(conn, user, app.settings.session_expiry_seconds)
    home = "/desk" if app.settings.version >= 16 else "/app"
    full_name = row["full_name"] if row else "Administrator"
    response = FrappeJSON({"message": "Logged In", "home_page": home, "full_name": full_name})
    max_age = int(app.settings.session_expiry_seconds)
    response.set_cookie("sid", sid, max_age=max_age, httponly=True, samesite="lax")
    response.set_cookie("system_user", "yes", samesite="lax")
    response.set_cookie("full_name", urllib.parse.quote(full_name or ""), samesite="lax")
    response.set_cookie("user_id", urllib.parse.quote(user), samesite="lax")
    response.set_cookie("user_image", "", samesite="lax")
    return response


def _login_failed(message: str) -> Response:
    body = {"message": message, "exc_type": "AuthenticationError"}
    response = FrappeJSON(body, status_code=401)
    for cookie in ("sid", "system_user", "full_name", "user_id", "user_image"):
        response.delete_cookie(cookie)
    return response


def _doctype_method(path: str) -> str:
    """v2's ``/method/{doctype}/{method}``: the method in that DocType's controller module."""
    doctype, _, name = path.rpartition("/")
    meta = records.require_meta(doctype)
    scrubbed = meta.name.lower().replace(" ", "_")
    suffix = f".doctype.{scrubbed}.{scrubbed}.{name}"
    found = next((p for p in METHODS if p.endswith(suffix)), None)
    if found is None:
        app = "frappe" if meta.module in ("Core", "Workflow") else "erpnext"
        module = f"{app}.{meta.module.lower().replace(' ', '_')}.doctype.{scrubbed}.{scrubbed}"
        raise ValidationError(
            f"Failed to get method {module}.{name} with module '{module}' has no attribute '{name}'"
        )
    return found


def _call_method(
    app: DemoERP,
    request: Request,
    path: str,
    user: str,
    sid: str | None,
    args: dict[str, Any],
    api_v2: bool = False,
) -> Response:
    if path == "logout":
        if sid:
            auth.end_session(app.conn(), sid)
        response = FrappeJSON({})
        response.delete_cookie("sid")
        return response
    if api_v2 and "/" in path:
        path = _doctype_method(path)
    method = METHODS.get(path)
    if method is None:
        if api_v2:
            raise ValidationError(
                f"Failed to get method {path} with No module named '{path.rsplit('.', 1)[0]}'"
            )
        raise ValidationError(
            f"Failed to get method for command {path} with No module named '{path.rsplit('.', 1)[0]}'"
        )
    if user == GUEST and not method.allow_guest:
        raise PermissionError(
            "",
            messages=[
                {
                    "message": f"You are not permitted to access this resource. Function {path} is not whitelisted.",
                    "title": "Method Not Allowed",
                    "indicator": "red",
                }
            ],
        )
    if request.method not in method.verbs:
        raise PermissionError("Not permitted", title="Not Permitted")
    ctx = _ctx(app, user)
    if path == "frappe.desk.form.load.getdoctype":
        return FrappeJSON(
            {"docs": doctype_bundle(str(args.get("doctype") or "")), "user_settings": "{}"}
        )
    with documents.transaction(ctx.conn, write=request.method in UNSAFE):
        result = method.handler(ctx, args)
    body = {} if result is None else {"data" if api_v2 else "message": result}
    return FrappeJSON(with_messages(body, ctx.messages, api_v2))


def _v2_route(
    app: DemoERP, request: Request, path: str, user: str, args: dict[str, Any]
) -> Response:
    ctx = _ctx(app, user)
    with documents.transaction(ctx.conn, write=request.method in UNSAFE):
        reply = v2.handle(ctx, request.method, path, args)
    body = {} if reply.data is None else {"data": reply.data}
    body.update(reply.extra)
    return FrappeJSON(with_messages(body, ctx.messages, True), status_code=reply.status)


def _resource(
    app: DemoERP, request: Request, doctype: str, name: str | None, user: str, args: dict[str, Any]
) -> Response:
    if user == GUEST:
        raise PermissionError(
            "",
            messages=[{"message": "Not permitted", "title": "Message"}],
            error_message=f"No permission for {doctype}",
        )
    records.require_meta(doctype)
    ctx = _ctx(app, user)
    verb = request.method
    with documents.transaction(ctx.conn, write=verb in UNSAFE):
        run_method = args.pop("run_method", None)
        if name is None:
            if verb == "GET":
                return FrappeJSON({"data": query.get_list(ctx, doctype, **list_args(args))})
            if verb == "POST":
                payload = args.get("data", args)
                payload = json.loads(payload) if isinstance(payload, str) else payload
                if not isinstance(payload, dict):
                    raise ValidationError("Request body must be a JSON object")
                return FrappeJSON({"data": documents.insert(ctx, doctype, payload)})
            raise PermissionError("Not permitted")
        if run_method:
            return FrappeJSON({"data": run_doc_method(ctx, doctype, name, str(run_method), verb)})
        if verb == "GET":
            return FrappeJSON({"data": no_nulls(documents.get(ctx, doctype, name))})
        if verb == "PUT":
            payload = args.get("data", args)
            payload = json.loads(payload) if isinstance(payload, str) else payload
            if not isinstance(payload, dict):
                raise ValidationError("Request body must be a JSON object")
            payload = {k: v for k, v in payload.items() if k not in ("flags", "doctype", "name")}
            return FrappeJSON({"data": documents.save(ctx, doctype, name, payload)})
        if verb == "DELETE":
            documents.delete(ctx, doctype, name)
            return FrappeJSON({"data": "ok"}, status_code=202)
    raise PermissionError("Not permitted")


def create_app(settings: Settings) -> Starlette:
    """The demo ERP as an ASGI app over the SQLite file named in ``settings``."""
    state = DemoERP(settings)
    trace = settings.allow_error_traceback

    async def endpoint(request: Request) -> Response:
        path = request.url.path
        for prefix in ("/api/v1/", "/api/", "/"):
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                break
        try:
            args = await _form_dict(request)
        except BadJSON as exc:
            return unexpected_error(json.JSONDecodeError(str(exc), "", 0), trace)
        if path == "/" and not args.get("cmd"):
            return RedirectResponse("/login", status_code=302)
        signing_in = rest.startswith(("method/login", "method/logout", "v2/method/login"))
        signing_in = signing_in or args.get("cmd") in ("login", "logout")
        response = await run_in_threadpool(_dispatch, state, request, rest, args, trace)
        if settings.write_delay and request.method in UNSAFE and not signing_in:
            await asyncio.sleep(settings.write_delay)
        return response

    async def desk_document(request: Request) -> Response:
        return await run_in_threadpool(_desk_document, state, request)

    async def login_page(request: Request) -> Response:
        return HTMLResponse(desk.login_page(request.query_params.get("redirect-to")))

    routes = [
        Route("/app/{slug}/{name:path}", desk_document, methods=["GET"]),
        Route("/login", login_page, methods=["GET"]),
        # Frappe's classic RPC: ``cmd`` in the query or form at the site root (deprecated).
        Route("/", endpoint, methods=["GET", "POST"]),
        Route("/api/{rest:path}", endpoint, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
    ]
    return Starlette(routes=routes)


def _dispatch(
    state: DemoERP, request: Request, rest: str, args: dict[str, Any], trace: bool
) -> Response:
    # Frappe looks at ``cmd`` before the path: a classic RPC, answered in v1's shape.
    cmd = args.pop("cmd", None)
    api_v2 = not cmd and rest.startswith("v2/")
    if cmd:
        rest = f"method/{cmd}"
    elif api_v2:
        rest = rest[len("v2/") :]
    try:
        if rest.strip("/") == "method/login" and request.method in ("POST", "GET"):
            return _login(state, args)
        user, sid = _authenticate(state, request, args)
        if api_v2:
            if rest.startswith("method/"):
                return _call_method(
                    state, request, rest[len("method/") :].strip("/"), user, sid, args, True
                )
            return _v2_route(state, request, rest, user, args)
        if rest.startswith("method/" + oauth.PREFIX):
            endpoint = rest[len("method/" + oauth.PREFIX) :].strip("/")
            if endpoint in oauth.ENDPOINTS:
                base = f"{request.url.scheme}://{request.url.netloc}"
                return oauth.endpoint(
                    state.conn(), endpoint, method=request.method, user=user, args=args,
                    url=str(request.url), server_url=base,
                )  # fmt: skip
        if rest.startswith("method/"):
            return _call_method(state, request, rest[len("method/") :].strip("/"), user, sid, args)
        if rest.startswith("resource/"):
            parts = rest[len("resource/") :].split("/", 1)
            doctype = urllib.parse.unquote(parts[0])
            name = urllib.parse.unquote(parts[1]) if len(parts) > 1 and parts[1] else None
            return _resource(state, request, doctype, name, user, args)
        raise DoesNotExistError("")
    except FrappeError as exc:
        return error_response(exc, trace, api_v2)
    except Exception as exc:  # Frappe turns anything else into a 500 body
        return unexpected_error(exc, trace, api_v2)


def _desk_document(state: DemoERP, request: Request) -> Response:
    """The desk page of one document, for a signed-in user allowed to read it (else why not)."""
    meta = desk.doctype_for_slug(request.path_params["slug"])
    name = urllib.parse.unquote(request.path_params["name"])
    if meta is None:
        return HTMLResponse(desk.message_page("Not found", "Page not found"), status_code=404)
    try:
        user, _ = _authenticate(state, request, {})
    except FrappeError:
        user = GUEST
    if user == GUEST:
        target = urllib.parse.quote(request.url.path, safe="/")
        return RedirectResponse(f"/login?redirect-to={target}", status_code=302)
    try:
        doc = documents.get(_ctx(state, user), meta.name, name)
    except DoesNotExistError:
        text = f"{meta.name} {html.escape(name)} not found"
        return HTMLResponse(desk.message_page("Not found", text, user), status_code=404)
    except PermissionError as exc:
        text = html.escape(exc.message or exc.error_message or f"No permission for {meta.name}")
        return HTMLResponse(desk.message_page("Not permitted", text, user), status_code=403)
    return HTMLResponse(desk.document_page(meta, doc, user))
