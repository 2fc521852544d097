"""What several workers share through Redis (``ERP_AGENT_REDIS_URL``): the token-rate gate,
progress events of running turns, sign-in failure counts and the response cache. Each part
has an in-process fallback, used (with a warning) when Redis is not configured or is down."""
