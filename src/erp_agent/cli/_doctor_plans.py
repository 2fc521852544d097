"""`erp-agent doctor`'s lines about plans and subscriptions: which plan each organisation is
on (and what it allows), the default plan, and where subscriptions are delivered."""

from __future__ import annotations

from pathlib import Path

from erp_agent.cli._doctor_types import Check
from erp_agent.config import Settings


async def plan_checks(settings: Settings) -> list[Check]:
    from erp_agent.gateway.plans import PlanBook
    from erp_agent.store.sql_store import SQLStore, open_store
    from erp_agent.subscriptions.models import Status
    from erp_agent.subscriptions.store import SubscriptionStore

    url = (
        settings.database_url
        or f"sqlite+aiosqlite:///{Path(settings.data_dir) / 'erp-agent.sqlite'}"
    )
    store = open_store(url)
    try:
        assert isinstance(store, SQLStore)
        book = PlanBook(store.engine, default=settings.default_plan)
        plans, assigned = await book.plans(), await book.assignments()
        active = len(await SubscriptionStore(store.engine).listing(status=Status.ACTIVE))
    except Exception as exc:  # not migrated yet, or unreachable (the store line says which)
        return [Check("plans", "warn", f"not read ({type(exc).__name__}): see the store line")]
    finally:
        await store.close()
    checks: list[Check] = []
    if settings.default_plan and settings.default_plan not in plans:
        checks.append(Check("plans", "FAIL", f"ERP_AGENT_DEFAULT_PLAN names {settings.default_plan!r}, "
                            "which no plan is called: define it in the admin console"))  # fmt: skip
    elif not plans:
        checks.append(Check("plans", "ok", "none defined: no organisation is limited"))
    else:
        default = f"default {settings.default_plan!r}" if settings.default_plan else "no default"
        checks.append(Check("plans", "ok", f"{len(plans)} defined ({', '.join(sorted(plans))}); {default}"))  # fmt: skip
        for org, name in sorted(assigned.items()):
            plan = plans.get(name)
            detail = plan.describe() if plan is not None else "missing"
            checks.append(Check(f"plan of {org}"[:16], "ok" if plan else "FAIL", f"{name}: {detail}"))  # fmt: skip
    smtp = settings.smtp
    mail = (
        f"email via {smtp.host}:{smtp.port}"
        if smtp.host
        else "email off (ERP_AGENT_SMTP_HOST unset)"
    )
    every = settings.subscriptions.tick_seconds
    when = (
        f"checked every {every:g} s"
        if every > 0
        else "never run (ERP_AGENT_SUBSCRIPTIONS_TICK_SECONDS=0)"
    )
    checks.append(Check("subscriptions", "ok" if every > 0 else "warn", f"{active} active, {when}; {mail}"))  # fmt: skip
    return checks
