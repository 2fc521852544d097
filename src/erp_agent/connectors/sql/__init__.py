"""The SQL connector for bespoke databases (SQLite, MariaDB, PostgreSQL)."""
