"""Searches a scrollback index the way its users' tools do, and prints what they found as JSON.

Usage: python3 fts_tools.py INDEX QUERY...

For each query: the entry ids that sqlite-utils' `Table.search` returns, and those that Datasette's
table view returns for `?_search=QUERY&_searchmode=raw`, with `detect_fts()` as each tool sees it.
Run by tests/tools.rs, which compares them with FTS5's own hits.
"""

import asyncio
import json
import sys
import urllib.parse

import sqlite_utils
from datasette.app import Datasette
from datasette.utils import detect_fts


async def datasette_hits(ds, query):
    ids, path = [], "/index/entries.json?" + urllib.parse.urlencode(
        {"_search": query, "_searchmode": "raw", "_col": "id", "_size": "max", "_shape": "objects"}
    )
    while path:
        response = await ds.client.get(path)
        if response.status_code != 200:
            raise SystemExit(f"datasette answered {response.status_code} for {path}: {response.text[:500]}")
        page = response.json()
        ids += [row["id"] for row in page["rows"]]
        path = page.get("next_url")
        if path:
            path = urllib.parse.urlsplit(path)._replace(scheme="", netloc="").geturl()
    return sorted(ids)


async def main(index, queries):
    db = sqlite_utils.Database(index)
    ds = Datasette([index])
    conn = db.conn
    out = {
        "sqlite_utils_detect_fts": db["entries"].detect_fts(),
        "datasette_detect_fts": detect_fts(conn, "entries"),
        "sqlite_utils": {},
        "datasette": {},
    }
    for query in queries:
        out["sqlite_utils"][query] = sorted(row["id"] for row in db["entries"].search(query, columns=["id"]))
        out["datasette"][query] = await datasette_hits(ds, query)
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2:]))
