"""The PostgreSQL hybrid search as ONE statement (one round trip): the dense leg (see
``nearest``: an exact scan of a narrow scope's rows, else an HNSW scan with the scope in its
WHERE, filled by pgvector's iterative scan), the keyword leg (GIN; AND first, the OR fill-up only
when the AND found fewer than k, decided inside the statement), the exact-id pins, reciprocal
rank fusion and the cards themselves.

It computes what ``Index.search`` computes from the backend's legs, step for step (the contract
suite runs both backends through the same tests):
- which words the AND uses and which the OR fill-up may use come from the tsvector column's
  statistics (``pg_stats.most_common_elems``, what ANALYZE keeps; the caller reads them once a
  minute and passes them in as ``TermStats``: planning the ``pg_stats`` view inside every
  statement cost ~0.45 ms of its ~1.1 ms planning, measured), each query word's lexemes looked up inside the
  statement: a word in more than half the rows is left out of the AND, and the OR uses only
  words in at most ``RARE`` of the rows (tables under ``PRUNE_ABOVE`` rows keep every word);
- AND hits weigh 1, OR fill-up hits ``LOOSE_WEIGHT``; a card still without a vector is credited
  in the dense leg at its keyword rank while the dense leg has results;
- a card named by its exact id comes first.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from psycopg import sql

from erp_agent.retrieval import _sql
from erp_agent.retrieval.documents import Scope
from erp_agent.retrieval.hybrid import LOOSE_WEIGHT

# Rows each keyword leg ranks at most (see index_postgres): each is a heap page read, ~5 us at
# a million cards ("Baobab Dairies invoice status", 3,900 AND matches at 1M cards: the whole
# statement 24 ms at 5,000, 13 ms at 1,000, measured). Kept at 5,000 / 2,000: fewer would rank
# a sample of a common word's matches, not all of them as SQLite does.
AND_CANDIDATES = 5_000
OR_CANDIDATES = 2_000
RARE = 0.02
PRUNE_ABOVE = 20_000


class TermStats(NamedTuple):
    """The tsvector column's statistics: whether the table is small (under ``PRUNE_ABOVE``
    rows: every word kept), and its most common lexemes with each one's share of the rows."""

    small: bool
    shares: dict[str, float]

    def literals(self, terms: list[str]) -> tuple[str, str]:
        """The lexemes a query's words may stem to (those starting as one of the words does:
        a stem keeps its word's first letter) and their shares, as two array literals: sent
        as text, not as lists psycopg adapts element by element (1,000 lexemes: ~1.6 ms a
        statement, measured, against ~0.2 ms as text)."""
        firsts = {t[:1].lower() for t in terms}
        found = [(e, f) for e, f in self.shares.items() if e[:1] in firsts]
        elems = ",".join('"' + e.replace("\\", "\\\\").replace('"', '\\"') + '"' for e, _ in found)
        return "{" + elems + "}", "{" + ",".join(repr(f) for _, f in found) + "}"


NO_STATS = TermStats(True, {})


def scope_sql(scope: Scope, params: dict[str, Any]) -> sql.Composed:
    """The scope as conditions on ``d``, with named parameters (reused by every leg)."""

    def param(value: Any) -> str:
        name = f"scope_{len(params)}"
        params[name] = value
        return f"%({name})s"

    def in_list(values: list[str]) -> str:
        return f"= ANY({param(values)})"

    return sql.SQL(_sql.scope_where(scope, "d", param, in_list)).format()


def opaque(where: sql.Composable) -> sql.Composed:
    """The scope as one condition no B-tree index can serve (the planner still estimates its
    rows from the parts), for the keyword legs: ANDed with their GIN bitmap, the scope indexes
    cost more than they save (a 30k-row scope's bitmap, ~3 ms, to narrow ~30 matches); they
    are there for the exact dense path."""
    return sql.SQL("({}) IS TRUE").format(where)


def nearest(
    docs: sql.Identifier, where: sql.Composable, exact_cap: int | None, params: dict[str, Any]
) -> tuple[list[sql.Composable], sql.Composable]:
    """CTEs and a subquery of (key, score): the ``%(k)s`` in-scope cards nearest ``%(v)s``.

    ``exact_cap`` None (a wide scope): the HNSW graph, the scope in its WHERE, filled by the
    iterative scan, which visits about k / (the scope's share of rows) cards to find k.
    Otherwise (a narrow scope, as pgvector's docs advise for selective filters): the in-scope
    rows through the scope's B-tree indexes, every one's exact distance (perfect recall, no
    graph). The exact path reads at most ``exact_cap`` rows: a scope that turns out to hold more
    (the planner's estimate was wrong) gets the plain ordered query instead, decided inside the
    statement (its plan is the planner's: the graph, or the scope's rows sorted).
    """
    walk = (
        "SELECT d.key, 1 - (d.embedding <=> %(v)s) AS score FROM {docs} d WHERE {where} "
        "AND d.embedding IS NOT NULL{gate} ORDER BY d.embedding <=> %(v)s LIMIT %(k)s"
    )
    if exact_cap is None:
        return [], sql.SQL(walk).format(docs=docs, where=where, gate=sql.SQL(""))
    params["cap"] = exact_cap
    ctes: list[sql.Composable] = [
        # Each in-scope row's distance as it is read (one heap visit); no ORDER BY, so no graph.
        sql.SQL(
            "cand AS MATERIALIZED (SELECT d.key, 1 - (d.embedding <=> %(v)s) AS score "
            "FROM {docs} d WHERE {where} AND d.embedding IS NOT NULL LIMIT %(cap)s + 1)"
        ).format(docs=docs, where=where),
        sql.SQL("few AS MATERIALIZED (SELECT count(*) <= %(cap)s AS yes FROM cand)"),
    ]
    exact = sql.SQL(
        "SELECT key, score FROM cand WHERE (SELECT yes FROM few) ORDER BY score DESC, key "
        "LIMIT %(k)s"
    )
    fallback = sql.SQL(walk).format(
        docs=docs, where=where, gate=sql.SQL(" AND NOT (SELECT yes FROM few)")
    )
    return ctes, sql.SQL("({}) UNION ALL ({})").format(exact, fallback)


def hybrid(
    docs: sql.Identifier,
    stats: TermStats,
    scope: Scope,
    *,
    vector: Any | None,
    terms: list[str],
    ids: list[str],
    parts: set[str],
    leg_k: int,
    rrf_k: int,
    limit: int,
    exact_cap: int | None = None,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The statement and its parameters; rows: score, dense_rank, keyword_rank, then the
    card's columns (``_sql.COLUMNS``), best first. ``exact_cap``: see ``nearest``.

    The keyword legs' scope: for a narrow scope (``exact_cap`` set) the plain conditions, so
    the planner may AND the GIN bitmap with the scope indexes' (a common word's thousands of
    matches are then never read from the heap to find the few in scope); for a wide one
    ``opaque``."""
    params: dict[str, Any] = {
        "k": leg_k,
        "rrf": float(rrf_k),
        "limit": limit,
        "tenant": scope.tenant,
    }
    where = scope_sql(scope, params)
    ctes: list[sql.Composable] = []
    legs: list[sql.Composable] = []
    if vector is not None:
        params["v"] = vector
        dense_ctes, dense = nearest(docs, where, exact_cap, params)
        ctes += dense_ctes
        ctes.append(
            sql.SQL(
                "sem AS MATERIALIZED (SELECT s.key, row_number() OVER "
                "(ORDER BY s.score DESC, s.key) AS rk FROM ({}) s)"
            ).format(dense)
        )
        legs.append(
            sql.SQL(
                "SELECT key, 1.0::float8 / (%(rrf)s + rk) AS s, rk AS drk, NULL::bigint AS krk FROM sem"
            )
        )
    if terms or ids:
        keyword_where = where if vector is not None and exact_cap is not None else opaque(where)
        ctes += _keyword(docs, stats, keyword_where, terms, ids, parts, params)
        credit = (
            "CASE WHEN bare AND EXISTS (SELECT 1 FROM sem) THEN 2 ELSE 1 END"
            if vector is not None
            else "1"
        )
        legs.append(
            sql.SQL(
                f"SELECT key, w * {credit} / (%(rrf)s + rk) AS s, NULL::bigint AS drk, rk AS krk FROM kw"
            )
        )
    fused = (
        sql.SQL(" UNION ALL ").join(legs)
        if legs
        else sql.SQL(
            "SELECT NULL::text AS key, 0::float8 AS s, NULL::bigint AS drk, NULL::bigint AS krk WHERE false"
        )
    )
    ctes.append(
        sql.SQL(
            "fused AS MATERIALIZED (SELECT key, sum(s) AS score, min(drk) AS drk, min(krk) AS krk "
            "FROM ({}) legs GROUP BY key)"
        ).format(fused)
    )
    if ids:  # the cards named by their exact id, first
        params["ids"] = ids
        ctes.append(
            sql.SQL(
                "pin AS MATERIALIZED (SELECT d.key FROM {docs} d WHERE {where} "
                "AND d.ident = ANY(%(ids)s))"
            ).format(docs=docs, where=where)
        )
        ctes.append(
            sql.SQL(
                "ranked AS (SELECT coalesce(f.key, p.key) AS key, CASE WHEN p.key IS NOT NULL THEN "
                "(SELECT coalesce(max(score), 0) FROM fused) + 1.0 ELSE f.score END AS score, "
                "f.drk, f.krk FROM fused f FULL JOIN pin p ON p.key = f.key)"
            )
        )
    else:  # no pins: no join to plan
        ctes.append(sql.SQL("ranked AS (SELECT key, score, drk, krk FROM fused)"))
    columns = sql.SQL(", ").join(sql.SQL("d.{}").format(sql.Identifier(c)) for c in _sql.COLUMNS)
    query = sql.SQL(
        # The top ``limit`` first, then their cards (not a card per candidate of both legs).
        "WITH {ctes} SELECT r.score, r.drk AS dense_rank, r.krk AS keyword_rank, {columns} "
        "FROM (SELECT * FROM ranked ORDER BY score DESC, key LIMIT %(limit)s) r "
        "JOIN {docs} d ON d.tenant = %(tenant)s AND d.key = r.key ORDER BY r.score DESC, r.key"
    ).format(ctes=sql.SQL(", ").join(ctes), columns=columns, docs=docs)
    return query, params


def _keyword(
    docs: sql.Identifier,
    stats: TermStats,
    where: sql.Composed,
    terms: list[str],
    ids: list[str],
    parts: set[str],
    params: dict[str, Any],
) -> list[sql.Composable]:
    """CTEs ``words`` (each query word's share of rows), ``kw_and``, ``kw_or`` and ``kw`` (the
    keyword ranking: AND hits, then OR hits not among them, cut at k)."""
    elems, shares = stats.literals(terms)
    params.update(
        terms=terms,
        loose=[t not in parts for t in terms],
        small=stats.small,
        elems=elems,
        shares=shares,
        rare=RARE,
    )
    ctes: list[sql.Composable] = [
        # A word's share of the rows is that of its most common lexeme (0 for a word ANALYZE
        # did not find common).
        sql.SQL(
            "words AS MATERIALIZED (SELECT w.term, w.n, w.loose, %(small)s::bool AS small, "
            "coalesce((SELECT max(c.share) FROM unnest(tsvector_to_array(to_tsvector("
            "'english', w.term))) lx, unnest(%(elems)s::text[], %(shares)s::float8[]) "
            "AS c(elem, share) WHERE c.elem = lx), 0) AS freq "
            "FROM unnest(%(terms)s::text[], %(loose)s::bool[]) WITH ORDINALITY AS w(term, loose, n))"
        ),
    ]
    strict: list[sql.Composable] = []
    if terms:
        strict.append(
            sql.SQL(
                "websearch_to_tsquery('english', coalesce((SELECT string_agg(term, ' ' ORDER BY n) "
                "FILTER (WHERE small OR freq <= 0.5) FROM words), (SELECT term FROM words "
                "ORDER BY n LIMIT 1)))"
            )
        )
    if ids:
        params["ids_and"] = " & ".join(ids)
        strict.append(sql.SQL("to_tsquery('simple', %(ids_and)s)"))
    ctes.append(_leg("kw_and", docs, where, sql.SQL(" && ").join(strict), AND_CANDIDATES, None))
    # The OR fill-up, as Index.search would run it: only when the AND found fewer than k, the
    # query has more than one term, and no named id matched.
    loose_words = [t for t in terms if t not in parts]
    if len(terms) + len(ids) > 1 and (loose_words or (ids and terms)):
        pieces: list[sql.Composable] = []
        if loose_words:
            pieces.append(
                sql.SQL(
                    "to_tsquery('english', (SELECT string_agg(term, ' | ' ORDER BY n) FILTER "
                    "(WHERE loose AND (small OR freq <= %(rare)s)) FROM words))"
                )
            )
        if ids:
            params["ids_or"] = " | ".join(ids)
            pieces.append(sql.SQL("to_tsquery('simple', %(ids_or)s)"))
        # A NULL part (no rare word) drops out; with ids and words both, either may match.
        tsquery = (
            pieces[0]
            if len(pieces) == 1
            else sql.SQL("coalesce({0} || {1}, {1})").format(pieces[0], pieces[1])
        )
        gate = sql.SQL(
            "(SELECT count(*) FROM kw_and) < %(k)s"
            + (" AND NOT EXISTS (SELECT 1 FROM kw_and)" if ids else "")
        )
        ctes.append(_leg("kw_or", docs, where, tsquery, OR_CANDIDATES, gate))
        ctes.append(
            sql.SQL(
                "kw AS (SELECT key, rk, 1.0::float8 AS w, bare FROM kw_and UNION ALL "
                "SELECT key, rk, {w}::float8, bare FROM (SELECT o.key, o.bare, "
                "(SELECT count(*) FROM kw_and) + row_number() OVER (ORDER BY o.rk) AS rk "
                "FROM kw_or o WHERE o.key NOT IN (SELECT key FROM kw_and)) more "
                "WHERE rk <= %(k)s)"
            ).format(w=sql.Literal(LOOSE_WEIGHT))
        )
    else:
        ctes.append(sql.SQL("kw AS (SELECT key, rk, 1.0::float8 AS w, bare FROM kw_and)"))
    return ctes


def _leg(
    name: str,
    docs: sql.Identifier,
    where: sql.Composed,
    tsquery: sql.Composable,
    candidates: int,
    gate: sql.Composable | None,
) -> sql.Composable:
    """One keyword leg: rank a bounded sample of the matching rows (a GIN bitmap has no
    order), top k by ts_rank then key."""
    condition = sql.SQL(" AND {}").format(gate) if gate is not None else sql.SQL("")
    return sql.SQL(
        "{name} AS MATERIALIZED (SELECT m.key, m.bare, row_number() OVER "
        "(ORDER BY m.score DESC, m.key) AS rk FROM (SELECT d.key, d.embedding IS NULL AS bare, "
        "ts_rank(d.tsv, t.q) AS score FROM {docs} d, (SELECT {tsquery} AS q) t "
        "WHERE {where} AND d.tsv @@ t.q{condition} LIMIT {candidates}) m "
        "ORDER BY m.score DESC, m.key LIMIT %(k)s)"
    ).format(
        name=sql.Identifier(name),
        docs=docs,
        tsquery=tsquery,
        where=where,
        condition=condition,
        candidates=sql.Literal(candidates),
    )
