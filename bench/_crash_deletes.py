"""The crash suite's delete trials: knowledge bases and vector stores deleted while
their ingestion runs, vector store files detached and ``/v1/files`` deleted, and a
``kill -9`` of ``ragloom serve`` at a random moment of it all.

Not a benchmark itself: ``bench/crash_suite.py`` runs these trials (kinds
``kb_delete`` and ``vs_delete``) next to its own and imports this module as
``_crash_deletes``.

Each trial runs a plan of requests (uploads, attaches, deletes, a re-creation or
re-attach after a delete) in a thread, kills the server at a random moment, restarts
it, waits until no job is ``in_progress``, and checks what each request's outcome
promises. A request answered is *acknowledged*; the one in flight at the kill may or
may not have happened, and the check accepts either, provided it happened whole:

- an acknowledged delete stays deleted: a GET is a 404, no list shows it, a search
  of it is a 404 (a deleted file: no search hit), and nothing of it is on disk (no
  collection row or chunk in the store file, no sidecar file, no upload in
  ``server-files`` or ``job_files``, no file bytes or link in ``server.db``);
- everything acknowledged and not deleted is there exactly once (chunk rows as a
  clean run stores them), and nothing else is (no collection the server does not
  list, no stray upload);
- ``PRAGMA integrity_check`` is ``ok`` on every SQLite file.

The HNSW sidecar of a collection is only built above 50,000 vectors, so each trial
plants a stand-in sidecar file next to every collection it creates: a delete must
remove it.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from crash_suite import Check, Server, store_files

DELETE_KINDS = ("kb_delete", "vs_delete")
ALIVE, GONE, UNKNOWN = "alive", "gone", "unknown"


# ---------------------------------------------------------------- the plan
@dataclass
class Step:
    """One request of a plan: ``send`` it; ``before`` records what may happen if the
    kill cuts it, ``after`` what its answer acknowledges."""

    label: str
    send: Callable[[httpx.Client], Any]
    before: Callable[[], None]
    after: Callable[[Any], None]


def run_plan(client: httpx.Client, steps: list[Step]) -> None:
    for step in steps:
        step.before()
        step.after(step.send(client))


def _ok(response: httpx.Response) -> Any:
    response.raise_for_status()
    return response.json()


# ---------------------------------------------------------------- the store
@dataclass
class Disk:
    """What the data folder holds after the server stopped."""

    collections: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    sidecars: list[str] = field(default_factory=list)
    uploads: set[str] = field(default_factory=set)


def read_disk(data: Path, check: Check) -> Disk:
    """Every collection of every store file with its documents (source, chunk_count,
    chunk rows); integrity, chunks without a document and rows without a collection
    go to ``check``."""
    disk = Disk()
    for path, conn in store_files(data, check, {"documents", "chunks", "collections"}):
        names = dict(conn.execute("SELECT id, name FROM collections").fetchall())
        for name in names.values():
            disk.collections.setdefault(str(name), [])
        rows = conn.execute(
            "SELECT d.collection_id, d.source, d.chunk_count, (SELECT count(*) FROM "
            "chunks c WHERE c.collection_id = d.collection_id AND c.document_id = d.id) "
            "FROM documents d").fetchall()
        for cid, source, recorded, chunks in rows:
            if cid not in names:
                check.orphaned.append(f"{path.name}: document {source} without a "
                                      "collection")
                continue
            disk.collections[str(names[cid])].append((str(source), int(recorded),
                                                      int(chunks)))
    disk.sidecars = sorted(p.name for p in data.glob("*.hnsw*"))
    files = data / "server-files"
    if files.is_dir():
        disk.uploads = {p.name for p in files.iterdir()}
    return disk


def _observed(ident: str, what: str, got: httpx.Response, listed: set[str], expected: str,
              check: Check) -> str:
    """ALIVE or GONE as a GET says; a GET that disagrees with the list, an acknowledged
    object gone, or a deleted one back go to ``check``."""
    status = got.status_code
    state = ALIVE if status == 200 else GONE
    if (status == 200) != (ident in listed):
        check.orphaned.append(f"{ident}: GET {status} but listed {ident in listed}")
    if expected == ALIVE and state == GONE:
        check.lost.append(f"{ident}: {what} gone")
    elif expected == GONE and state == ALIVE:
        check.orphaned.append(f"{ident}: deleted but back")
    return state


def server_rows(data: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data / "server.db", timeout=30) as conn:
        return list(conn.execute(sql, params).fetchall())


def wait_quiet(data: Path, timeout: float = 120) -> bool:
    """Until no job of ``server.db`` is ``in_progress`` (ingestion and deletes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server_rows(data, "SELECT 1 FROM jobs WHERE status = 'in_progress' LIMIT 1"):
            return True
        time.sleep(0.1)
    return False


#: The store files of knowledge bases and of vector stores in a server's data folder.
KB_FILE, VS_FILE = "ragloom.db", "openai-vectors.sqlite"


def sidecar_name(collection: str) -> str:
    """How a collection's sidecar file name ends (``<store file>.<collection>.hnsw``)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in collection)
    return f".{safe}.hnsw"


def plant_sidecar(data: Path, store_file: str, collection: str) -> None:
    """A stand-in HNSW sidecar and its label map (the real one needs 50,000 vectors)."""
    name = store_file + sidecar_name(collection)
    (data / name).write_bytes(b"stand-in")
    (data / f"{name}.labels.json").write_text("{}")


def check_content(check: Check, where: str, documents: list[tuple[str, int, int]],
                  reference: dict[str, int], *, must: set[str], may: set[str],
                  name_of: dict[str, str] | None = None) -> None:
    """``must`` sources exactly once, ``may`` at most once, nothing else; each with the
    chunk rows of the clean run."""
    name_of = name_of or {}
    counts = Counter(source.split("#")[0] for source, _, _ in documents)
    for source, recorded, rows in documents:
        key = source.split("#")[0]
        expected = reference.get(name_of.get(key, key))
        if counts[key] > 1 or rows != recorded or rows != expected:
            check.duplicated.append(f"{where}/{source}: {rows} chunks (expected {expected})")
        if key not in must and key not in may:
            check.orphaned.append(f"{where}/{source}: stored but not expected")
    check.lost.extend(f"{where}/{s}" for s in sorted(must - set(counts)))


def check_gone_collection(check: Check, disk: Disk, where: str, collection: str) -> None:
    if collection in disk.collections:
        check.orphaned.append(f"{where}: its collection is still stored "
                              f"({len(disk.collections[collection])} documents)")
    left = [s for s in disk.sidecars if sidecar_name(collection) in s]
    if left:
        check.orphaned.append(f"{where}: sidecar files left: {left}")


def check_uploads(check: Check, data: Path, disk: Disk, gone_kbs: set[str]) -> None:
    """No upload of a deleted collection, and none at all once no job runs."""
    jobs = dict(server_rows(data, "SELECT id, kb_id FROM jobs"))
    for folder in sorted(disk.uploads):
        owner = jobs.get(folder)
        what = "a deleted knowledge base's" if owner in gone_kbs else "a stray"
        check.orphaned.append(f"server-files/{folder}: {what} upload left "
                              f"(job of {owner})")
    stored = server_rows(data, "SELECT job_id FROM job_files")
    if stored:
        check.orphaned.append(f"job_files: {len(stored)} uploads left")


# ---------------------------------------------------------------- kb_delete
@dataclass
class KbLedger:
    state: dict[str, str] = field(default_factory=dict)  # kb id -> alive/gone/unknown
    names: dict[str, str] = field(default_factory=dict)  # kb id -> name
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # kb -> name -> done/maybe
    creating: dict[str, list[str]] = field(default_factory=dict)  # name -> its files


class KbDeleteTrial:
    """Four knowledge bases, eight files each in two batches; two deleted while their
    jobs run (at random places of the plan), and sometimes one re-created under its old
    name and given files again."""

    kbs = 4

    def __init__(self, server: Server, corpus: dict[str, bytes], rng: random.Random) -> None:
        self.server = server
        self.corpus = corpus
        self.rng = rng
        self.ledger = KbLedger()

    def setup(self, client: httpx.Client) -> list[Step]:
        names = sorted(self.corpus)
        ids = []
        for k in range(self.kbs):
            kb = _ok(client.post("/api/knowledge-bases", json={"name": f"kb{k}"}))
            ids.append(kb["id"])
            self.ledger.state[kb["id"]] = ALIVE
            self.ledger.names[kb["id"]] = kb["name"]
            self.ledger.files[kb["id"]] = {}
            plant_sidecar(self.server.data, KB_FILE, kb["id"])
        files = {kb: [names[(4 * k + j) % len(names)] for j in range(8)]
                 for k, kb in enumerate(ids)}
        steps = [self._upload(kb, files[kb][half * 4:half * 4 + 4])
                 for half in (0, 1) for kb in ids]
        victims = self.rng.sample(ids, 2)
        for kb in victims:
            first = next(i for i, s in enumerate(steps) if s.label == f"upload {kb}")
            at = self.rng.randrange(first + 1, len(steps) + 1)
            steps.insert(at, self._delete(kb))
            steps = steps[:at + 1] + [s for s in steps[at + 1:] if s.label != f"upload {kb}"]
        if self.rng.random() < 0.5:
            name = self.ledger.names[victims[0]]
            steps.append(self._recreate(name, files[victims[0]][:4]))
        return steps

    def _upload(self, kb: str, group: list[str]) -> Step:
        files = self.ledger.files

        def send(client: httpx.Client) -> Any:
            return _ok(client.post(f"/api/knowledge-bases/{kb}/documents", files=[
                ("files", (n, self.corpus[n], "text/plain")) for n in group]))

        def before() -> None:
            files[kb].update({n: files[kb].get(n, "maybe") for n in group})

        return Step(f"upload {kb}", send, before,
                    lambda _: files[kb].update(dict.fromkeys(group, "done")))

    def _delete(self, kb: str) -> Step:
        state = self.ledger.state
        return Step(f"delete {kb}",
                    lambda c: _ok(c.delete(f"/api/knowledge-bases/{kb}")),
                    lambda: state.__setitem__(kb, UNKNOWN),
                    lambda _: state.__setitem__(kb, GONE))

    def _recreate(self, name: str, group: list[str]) -> Step:
        ledger = self.ledger

        def send(client: httpx.Client) -> Any:
            kb = _ok(client.post("/api/knowledge-bases", json={"name": name}))
            ledger.state[kb["id"]], ledger.names[kb["id"]] = ALIVE, name
            ledger.files[kb["id"]] = dict.fromkeys(group, "maybe")
            ledger.creating.pop(name)
            plant_sidecar(self.server.data, KB_FILE, kb["id"])
            _ok(client.post(f"/api/knowledge-bases/{kb['id']}/documents", files=[
                ("files", (n, self.corpus[n], "text/plain")) for n in group]))
            return kb["id"]

        return Step("recreate", send, lambda: ledger.creating.__setitem__(name, group),
                    lambda kb: ledger.files[kb].update(dict.fromkeys(group, "done")))

    def check_live(self, client: httpx.Client, check: Check) -> dict[str, str]:
        """Requests after the restart; returns each knowledge base's actual state."""
        ledger = self.ledger
        listed = {kb["id"]: kb["name"] for kb in _ok(client.get("/api/knowledge-bases"))["data"]}
        actual: dict[str, str] = {}
        for kb, expected in ledger.state.items():
            actual[kb] = ALIVE if kb in listed else GONE
            status = client.get(f"/api/knowledge-bases/{kb}").status_code
            if (status == 200) != (kb in listed):
                check.orphaned.append(f"{kb}: GET {status} but listed {kb in listed}")
            if expected == ALIVE and kb not in listed:
                check.lost.append(f"{kb}: knowledge base gone")
            if actual[kb] == GONE:
                if expected == ALIVE:
                    continue
                if expected == GONE and kb in listed:
                    check.orphaned.append(f"{kb}: deleted but listed again")
                search = client.post("/api/search", json={"query": "marker00",
                                                          "knowledge_bases": [kb]})
                if search.status_code != 404:
                    check.orphaned.append(f"{kb}: search after its delete: "
                                          f"{search.status_code}")
        for kb, name in listed.items():
            if kb in ledger.state:
                continue
            if name in ledger.creating:  # created by the request the kill cut
                ledger.files[kb] = dict.fromkeys(ledger.creating[name], "maybe")
                ledger.names[kb] = name
                actual[kb] = ALIVE
            else:
                check.orphaned.append(f"{kb} ({name}): a knowledge base nobody created")
        return actual

    def check_disk(self, data: Path, disk: Disk, actual: dict[str, str],
                   reference: dict[str, int], check: Check) -> None:
        gone = {kb for kb, state in actual.items() if state == GONE}
        for kb, state in actual.items():
            if state == GONE:
                check_gone_collection(check, disk, kb, kb)
                continue
            files = self.ledger.files.get(kb, {})
            check_content(check, kb, disk.collections.get(kb, []), reference,
                          must={n for n, s in files.items() if s == "done"},
                          may={n for n, s in files.items() if s == "maybe"})
        for collection in disk.collections:
            if actual.get(collection) != ALIVE:
                check.orphaned.append(f"collection {collection}: of no knowledge base")
        check_uploads(check, data, disk, gone)
        for kb in gone:
            for job, status in server_rows(data, "SELECT id, status FROM jobs WHERE kb_id = ? "
                                           "AND kind = 'kb_delete'", (kb,)):
                if status != "completed":
                    check.orphaned.append(f"{kb}: its delete job {job} is {status}")


# ---------------------------------------------------------------- vs_delete
@dataclass
class VsLedger:
    stores: dict[str, str] = field(default_factory=dict)  # vs id -> alive/gone/unknown
    files: dict[str, str] = field(default_factory=dict)  # file id -> alive/gone/unknown
    links: dict[tuple[str, str], str] = field(default_factory=dict)  # -> alive/gone/unknown
    names: dict[str, str] = field(default_factory=dict)  # file id -> file name


class VsDeleteTrial:
    """Twelve ``/v1`` files and three vector stores (one gets a batch, one files one by
    one, one another batch); one store deleted, two files detached, two files deleted
    (from every store), at random places of the plan; sometimes a detached file is
    attached again."""

    def __init__(self, server: Server, corpus: dict[str, bytes], rng: random.Random) -> None:
        self.server = server
        self.corpus = corpus
        self.rng = rng
        self.ledger = VsLedger()

    def setup(self, client: httpx.Client) -> list[Step]:
        ledger, rng = self.ledger, self.rng
        ids = []
        for name in sorted(self.corpus)[:12]:
            file = _ok(client.post("/v1/files", data={"purpose": "assistants"},
                                   files={"file": (name, self.corpus[name], "text/plain")}))
            ids.append(file["id"])
            ledger.files[file["id"]], ledger.names[file["id"]] = ALIVE, name
        stores = []
        for n in range(3):
            store = _ok(client.post("/v1/vector_stores", json={"name": f"vs{n}"}))
            stores.append(store["id"])
            ledger.stores[store["id"]] = ALIVE
            plant_sidecar(self.server.data, VS_FILE, f"vs:{store['id']}")
        s0, s1, s2 = stores
        attaches = [self._batch(s0, ids[0:6]), *(self._attach(s1, f) for f in ids[3:9]),
                    self._batch(s2, ids[6:12])]
        rng.shuffle(attaches)
        planned = [(s0, f) for f in ids[0:6]] + [(s1, f) for f in ids[3:9]] + \
                  [(s2, f) for f in ids[6:12]]
        victim = rng.choice(stores)
        deletes = [(("store", victim), self._delete_store(victim))]
        for vs, f in rng.sample([p for p in planned if p[0] != victim], 2):
            deletes.append((("link", vs, f), self._detach(vs, f)))
        for f in rng.sample(ids, 2):
            deletes.append((("file", f), self._delete_file(f)))
        steps = list(attaches)
        for _, step in deletes:
            steps.insert(rng.randrange(1, len(steps) + 1), step)
        steps = self._feasible(steps)
        detached = [s.label.split()[1:] for s in steps if s.label.startswith("detach")]
        if detached and rng.random() < 0.5:
            vs, f = detached[0]
            steps = self._feasible([*steps, self._attach(vs, f)])
        return steps

    def _feasible(self, steps: list[Step]) -> list[Step]:
        """Drop the requests a clean run would refuse (a deleted store or file, a link
        not attached yet): what remains all succeed without a kill."""
        stores_gone: set[str] = set()
        files_gone: set[str] = set()
        linked: set[tuple[str, str]] = set()
        kept = []
        for step in steps:
            verb, *args = step.label.split()
            if verb == "delete_store":
                if args[0] in stores_gone:
                    continue
                stores_gone.add(args[0])
            elif verb == "delete_file":
                files_gone.add(args[0])
                linked = {p for p in linked if p[1] != args[0]}
            elif verb in ("attach", "batch"):
                vs, files = args[0], [f for f in args[1:] if f not in files_gone]
                if vs in stores_gone or not files:
                    continue
                if len(files) != len(args) - 1:
                    step = self._batch(vs, files)
                linked.update((vs, f) for f in files)
            elif verb == "detach":
                if args[0] in stores_gone or (args[0], args[1]) not in linked:
                    continue
                linked.discard((args[0], args[1]))
            kept.append(step)
        return kept

    def _links(self, pairs: list[tuple[str, str]], state: str) -> None:
        for pair in pairs:
            self.ledger.links[pair] = state

    def _batch(self, vs: str, files: list[str]) -> Step:
        pairs = [(vs, f) for f in files]
        return Step(f"batch {vs} {' '.join(files)}",
                    lambda c: _ok(c.post(f"/v1/vector_stores/{vs}/file_batches",
                                         json={"file_ids": files})),
                    lambda: self._links(pairs, UNKNOWN), lambda _: self._links(pairs, ALIVE))

    def _attach(self, vs: str, f: str) -> Step:
        return Step(f"attach {vs} {f}",
                    lambda c: _ok(c.post(f"/v1/vector_stores/{vs}/files", json={"file_id": f})),
                    lambda: self._links([(vs, f)], UNKNOWN),
                    lambda _: self._links([(vs, f)], ALIVE))

    def _detach(self, vs: str, f: str) -> Step:
        return Step(f"detach {vs} {f}",
                    lambda c: _ok(c.delete(f"/v1/vector_stores/{vs}/files/{f}")),
                    lambda: self._links([(vs, f)], UNKNOWN),
                    lambda _: self._links([(vs, f)], GONE))

    def _delete_file(self, f: str) -> Step:
        ledger = self.ledger

        def mark(state: str) -> None:
            ledger.files[f] = state
            self._links([p for p in ledger.links if p[1] == f], state)

        return Step(f"delete_file {f}", lambda c: _ok(c.delete(f"/v1/files/{f}")),
                    lambda: mark(UNKNOWN), lambda _: mark(GONE))

    def _delete_store(self, vs: str) -> Step:
        stores = self.ledger.stores
        return Step(f"delete_store {vs}", lambda c: _ok(c.delete(f"/v1/vector_stores/{vs}")),
                    lambda: stores.__setitem__(vs, UNKNOWN),
                    lambda _: stores.__setitem__(vs, GONE))

    def check_live(self, client: httpx.Client, check: Check) -> dict[str, Any]:
        ledger = self.ledger
        listed_stores = {s["id"] for s in _ok(client.get("/v1/vector_stores",
                                                          params={"limit": 100}))["data"]}
        listed_files = {f["id"] for f in _ok(client.get("/v1/files"))["data"]}
        stores: dict[str, str] = {}
        for vs, expected in ledger.stores.items():
            stores[vs] = _observed(vs, "vector store", client.get(f"/v1/vector_stores/{vs}"),
                                   listed_stores, expected, check)
            if stores[vs] == GONE:
                search = client.post(f"/v1/vector_stores/{vs}/search", json={"query": "marker"})
                if search.status_code != 404:
                    check.orphaned.append(f"{vs}: search after its delete: "
                                          f"{search.status_code}")
        for vs in listed_stores - set(ledger.stores):
            check.orphaned.append(f"{vs}: a vector store nobody created")
        files: dict[str, str] = {}
        for f, expected in ledger.files.items():
            files[f] = _observed(f, "file", client.get(f"/v1/files/{f}"), listed_files,
                                 expected, check)
        links: dict[tuple[str, str], str] = {}
        for vs in (s for s, state in stores.items() if state == ALIVE):
            listed = {row["id"]: row["status"] for row in _ok(client.get(
                f"/v1/vector_stores/{vs}/files", params={"limit": 100}))["data"]}
            for f, status in listed.items():
                if status != "completed":
                    check.lost.append(f"{vs}/{f}: {status} after the restart")
            for f in ledger.files:
                expected = ledger.links.get((vs, f), GONE)
                links[(vs, f)] = ALIVE if f in listed else GONE
                if expected == ALIVE and f not in listed:
                    check.lost.append(f"{vs}/{f}: attached file gone")
                elif expected == GONE and f in listed:
                    check.orphaned.append(f"{vs}/{f}: detached or deleted but listed")
                if links[(vs, f)] == GONE and (vs, f) in ledger.links:
                    hits = _ok(client.post(f"/v1/vector_stores/{vs}/search", json={
                        "query": f"marker{ledger.names[f][4:6]}", "max_num_results": 20}))
                    if any(hit["file_id"] == f for hit in hits["data"]):
                        check.orphaned.append(f"{vs}/{f}: searchable after its removal")
        return {"stores": stores, "files": files, "links": links}

    def check_disk(self, data: Path, disk: Disk, actual: dict[str, Any],
                   reference: dict[str, int], check: Check) -> None:
        stores, files, links = actual["stores"], actual["files"], actual["links"]
        for vs, state in stores.items():
            collection = f"vs:{vs}"
            if state == GONE:
                check_gone_collection(check, disk, vs, collection)
                if server_rows(data, "SELECT 1 FROM oai_vs_files WHERE vs_id = ?", (vs,)):
                    check.orphaned.append(f"{vs}: file links left")
                continue
            present = {f for (s, f), state in links.items() if s == vs and state == ALIVE}
            check_content(check, vs, disk.collections.get(collection, []), reference,
                          must=present, may=set(), name_of=self.ledger.names)
        for f, state in files.items():
            if state == GONE:
                if server_rows(data, "SELECT 1 FROM oai_file_data WHERE id = ?", (f,)):
                    check.orphaned.append(f"{f}: its bytes are still stored")
                if server_rows(data, "SELECT 1 FROM oai_vs_files WHERE file_id = ?", (f,)):
                    check.orphaned.append(f"{f}: links left")
        alive = {f"vs:{vs}" for vs, state in stores.items() if state == ALIVE}
        for collection in disk.collections:
            if collection not in alive:
                check.orphaned.append(f"collection {collection}: of no vector store")
        check_uploads(check, data, disk, set())


# ---------------------------------------------------------------- the trial
TRIALS = {"kb_delete": KbDeleteTrial, "vs_delete": VsDeleteTrial}


def delete_trial(kind: str, work: Path, corpus: dict[str, bytes],
                 reference: dict[str, dict[str, int]], window: float | None,
                 rng: random.Random) -> tuple[Check, float]:
    """One trial; ``window`` None runs the plan to its end without a kill (the clean
    run that measures the window). Returns the check and the plan's seconds until no
    job runs (clean run) or until the kill."""
    server = Server(work / "data")
    trial = TRIALS[kind](server, corpus, rng)
    server.start()
    started = time.monotonic()
    try:
        with server.client() as client:
            steps = trial.setup(client)
        client = server.client()
        started = time.monotonic()
        if window is None:
            run_plan(client, steps)
            quiet = wait_quiet(server.data)
            elapsed = time.monotonic() - started
        else:
            def run() -> None:
                with contextlib.suppress(httpx.HTTPError):  # the kill cut the request
                    run_plan(client, steps)

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            time.sleep(rng.uniform(0.0, window))
            elapsed = time.monotonic() - started
            server.kill()
            thread.join(30)
        client.close()
    finally:
        server.kill()
    check = Check()
    server.start()
    try:
        quiet = wait_quiet(server.data)
        with server.client() as client:
            actual = trial.check_live(client, check)
    finally:
        server.stop()
    if not quiet:
        check.lost.append("jobs still in progress after the restart")
    disk = read_disk(server.data, check)
    table = reference["native" if kind == "kb_delete" else "v1"]
    trial.check_disk(server.data, disk, actual, table, check)  # type: ignore[arg-type]
    return check, elapsed
