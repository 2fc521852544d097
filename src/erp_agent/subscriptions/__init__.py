"""Questions that come back: "send me this every Monday at 8", "tell me when stock of X falls
below 50", "alert me when an invoice over 1M is overdue".

A subscription stores the question's *reading* — the tool calls that answer it (e.g. the
``metrics.query`` arguments), never its text to be re-interpreted — with a schedule (cron, in
the user's time zone) and, for an alert, a condition over the figure. A run (``runner.py``)
happens on the queue, as the user, with the permissions the ERP and the plan give them at run
time, through the gateway like any other call; its result goes to the user's channels: email
(``delivery.py``: SMTP), the ERP's own notification (a ToDo created as the user) and the web
app's inbox. The tools ``subscriptions.list/create/pause/resume/delete`` (``tools.py``) let any
model manage them; create is a write, so the user confirms it. ``phrases.py`` reads the
standing-request wording for the offline planner.
"""
