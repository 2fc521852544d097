"""Background turns on Celery (``ERP_AGENT_QUEUE_URL``: RabbitMQ or Redis as the broker):
the web worker stores the turn as ``queued`` and sends its id; any ``erp-agent worker`` runs
it; a worker killed mid-turn leaves the message unacknowledged, so the broker hands it to
another, which continues from the turn's last saved step."""
