"""Knowledge-store benchmarks: batched store throughput and search latency over 100k docs.

Used by ``scripts/bench_builtins.py``; runnable alone::

    python scripts/_bench_knowledge.py --docs 100000

Documents are generated at bench time (Zipf-distributed words, 30-60 words each) in a temp
directory. Each figure is printed next to a baseline measured in the same run on the same
machine: raw SQLite inserts into a bare FTS5 table for throughput, and the raw FTS5
``MATCH ... ORDER BY rank`` query for search latency. Targets: store > 2,000 docs/s
batched, search p50 < 10 ms.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from tools.builtin.knowledge import KnowledgeItem, SqliteKnowledgeStore, build_match_expression

VOCABULARY = 20_000
BATCH = 1_000


def make_vocabulary(size: int, rng: random.Random) -> list[str]:
    """Pronounceable pseudo-words, unique."""
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.randint(2, 4)
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)))
    return sorted(words)


def make_documents(count: int, seed: int = 7) -> list[KnowledgeItem]:
    """``count`` documents of 30-60 Zipf-distributed words with small metadata."""
    rng = random.Random(seed)
    vocabulary = make_vocabulary(VOCABULARY, rng)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocabulary))))
    docs: list[KnowledgeItem] = []
    for index in range(count):
        words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(30, 60))
        metadata = {"source": f"doc-{index % 50}", "tags": [rng.choice(("a", "b", "c"))]}
        docs.append(KnowledgeItem(" ".join(words) + f" serial{index}", metadata))
    return docs


def make_queries(docs: list[KnowledgeItem], count: int, seed: int = 11, *, common: bool = False) -> list[str]:
    """Two-word queries taken from random documents (so they have hits).

    By default the words are content words: the 100 most frequent words of the corpus (its
    stop words, present in nearly every document) are skipped, as a search for "the of"
    is not a realistic query. ``common=True`` draws from the stop words only (worst case).
    """
    rng = random.Random(seed)
    frequency = collections.Counter(word for doc in docs[:5_000] for word in doc.text.split())
    stop_words = {word for word, _count in frequency.most_common(100)}
    queries: list[str] = []
    while len(queries) < count:
        words = [w for w in rng.choice(docs).text.split()[:-1] if (w in stop_words) == common]
        if len(set(words)) >= 2:
            queries.append(" ".join(rng.sample(sorted(set(words)), 2)))
    return queries


def bench_store(path: Path, docs: list[KnowledgeItem]) -> float:
    """Docs per second for ``store_many`` in batches of 1,000 into a fresh file store."""
    with SqliteKnowledgeStore(path) as store:
        start = time.perf_counter()
        for offset in range(0, len(docs), BATCH):
            store.store_many(docs[offset : offset + BATCH])
        elapsed = time.perf_counter() - start
    return len(docs) / elapsed


def bench_store_baseline(path: Path, docs: list[KnowledgeItem]) -> float:
    """Docs per second for raw ``executemany`` into a bare FTS5 table (no dedup, no JSON)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
    start = time.perf_counter()
    for offset in range(0, len(docs), BATCH):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO t (text) VALUES (?)", [(d.text,) for d in docs[offset : offset + BATCH]])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return len(docs) / elapsed


def _p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1_000


def bench_search(path: Path, queries: list[str]) -> float:
    """Median milliseconds of ``SqliteKnowledgeStore.search`` (limit 5, with snippets)."""
    samples: list[float] = []
    with SqliteKnowledgeStore(path) as store:
        store.search(queries[0])  # warm the page cache
        for query in queries:
            start = time.perf_counter()
            store.search(query, limit=5)
            samples.append(time.perf_counter() - start)
    return _p50_ms(samples)


def bench_search_baseline(path: Path, queries: list[str]) -> float:
    """Median milliseconds of the bare FTS5 query on the same index (rowid + rank only)."""
    conn = sqlite3.connect(path)
    expressions = [build_match_expression(q) for q in queries]
    samples: list[float] = []
    sql = "SELECT rowid, rank FROM knowledge_fts WHERE knowledge_fts MATCH ? ORDER BY rank LIMIT 5"
    conn.execute(sql, (expressions[0],)).fetchall()
    for expression in expressions:
        start = time.perf_counter()
        conn.execute(sql, (expression,)).fetchall()
        samples.append(time.perf_counter() - start)
    conn.close()
    return _p50_ms(samples)


def run_knowledge_benchmarks(docs: int = 100_000, queries: int = 300, rounds: int = 2) -> dict[str, float]:
    """Run every knowledge benchmark; return the figures by name.

    Store and baseline inserts alternate for ``rounds`` rounds on fresh files and the best
    of each is kept, so a burst of load from other processes skews neither side alone.
    """
    documents = make_documents(docs)
    query_texts = make_queries(documents, queries)
    common_texts = make_queries(documents, queries, common=True)
    with tempfile.TemporaryDirectory(prefix="tooldeck-bench-") as tmp:
        store_rates: list[float] = []
        base_rates: list[float] = []
        for round_ in range(max(1, rounds)):
            store_rates.append(bench_store(Path(tmp) / f"kb{round_}.sqlite", documents))
            base_rates.append(bench_store_baseline(Path(tmp) / f"raw{round_}.sqlite", documents))
        store_path = Path(tmp) / "kb0.sqlite"
        results = {
            "store_docs_per_s": max(store_rates),
            "store_baseline_docs_per_s": max(base_rates),
            "search_p50_ms": bench_search(store_path, query_texts),
            "search_baseline_p50_ms": bench_search_baseline(store_path, query_texts),
            "search_common_p50_ms": bench_search(store_path, common_texts),
            "search_common_baseline_p50_ms": bench_search_baseline(store_path, common_texts),
        }
    results["documents"] = float(docs)
    return results


def print_knowledge_report(results: dict[str, float]) -> None:
    """Print the figures with ratios to their baselines and the targets."""
    docs = int(results["documents"])
    store, store_base = results["store_docs_per_s"], results["store_baseline_docs_per_s"]
    search, search_base = results["search_p50_ms"], results["search_baseline_p50_ms"]
    print(f"knowledge ({docs:,} documents)")
    print(
        f"  store_many throughput : {store:9,.0f} docs/s  (raw FTS5 insert {store_base:,.0f} "
        f"docs/s, ratio {store / store_base:.2f}; target > 2,000)"
    )
    print(
        f"  search p50            : {search:9.2f} ms      (raw FTS5 query {search_base:.2f} ms, "
        f"ratio {search / search_base:.2f}; target < 10 ms)"
    )
    common, common_base = results["search_common_p50_ms"], results["search_common_baseline_p50_ms"]
    print(
        f"  search p50, stop words: {common:9.2f} ms      (raw FTS5 query {common_base:.2f} ms, "
        f"ratio {common / common_base:.2f}; worst case, no target)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print_knowledge_report(run_knowledge_benchmarks(args.docs, args.queries, args.rounds))


if __name__ == "__main__":
    main()
