"""Shoal's parallel job driver.

The agent writes this file for each rank of a parallel job and the job's
command runs it: python3 "$SHOAL_PARALLEL_DRIVER" <program arguments>.
It lists the job's input and proposes how it splits into mini-batches,
starts max_concurrency_per_instance worker processes that import the entry
script and call init() once and run(mini_batch) for each mini-batch the
server's ledger leases this rank, reports every try, posts the files the
workers wrote in the job's outputs, and on rank 0 writes the outputs once
every mini-batch is finished. The protocol is Shoal's domain/parallel.

Standard library only: the user's image needs Python, nothing more
(pandas only when a table's rows are handed to run as a DataFrame).
"""

import gzip
import hashlib
import http.client
import importlib.util
import inspect
import io
import json
import logging
import os
import re
import select
import selectors
import signal
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import urllib.parse

TASK_ENV = "SHOAL_PARALLEL_TASK"
WORKER_ENV = "SHOAL_PARALLEL_WORKER"
MAX_MINI_BATCHES = 200_000
RANK_HEADER = "X-Shoal-Rank"
ERROR_CHARS = 2000

log = logging.getLogger("shoal.parallel")


class Fatal(Exception):
    """An error that ends the rank at once with its sentence."""


# ---------------------------------------------------------------- ledger


class Ledger:
    """The job's ledger on the server (domain/parallel's routes), over one
    kept-alive connection. Never through a proxy the job's environment
    names (HTTP_PROXY): the token goes to the server and nowhere else."""

    def __init__(self, url, token, rank):
        u = urllib.parse.urlsplit(url.rstrip("/"))
        self.scheme, self.host, self.port, self.base = u.scheme, u.hostname, u.port, u.path
        self.token = token
        self.rank = rank
        self.conn = None

    def connection(self):
        if self.conn is None:
            if self.scheme == "https":
                self.conn = http.client.HTTPSConnection(self.host, self.port or 443, timeout=120,
                                                        context=ssl.create_default_context())
            else:
                self.conn = http.client.HTTPConnection(self.host, self.port or 80, timeout=120)
        return self.conn

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def call(self, method, path, body=None, ctype="application/json", raw=False, sink=None):
        data = body
        if body is not None and ctype == "application/json":
            data = json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.token, RANK_HEADER: str(self.rank)}
        if data is not None:
            headers["Content-Type"] = ctype
            if hasattr(data, "seek"):
                data.seek(0, os.SEEK_END)
                headers["Content-Length"] = str(data.tell())
        delay = 0.05
        deadline = time.monotonic() + 600
        while True:
            if hasattr(data, "seek"):
                data.seek(0)  # a file body is sent again whole on a retry
            if sink is not None:
                sink.seek(0)
                sink.truncate()
            try:
                conn = self.connection()
                conn.request(method, self.base + path, body=data, headers=headers)
                resp = conn.getresponse()
                if resp.status >= 300:
                    text = resp.read().decode("utf-8", "replace").strip()
                    if resp.status < 500 and resp.status != 429:
                        raise Fatal(self.refusal(method, path, resp.status, text))
                    err = "%d %s" % (resp.status, text[:200])
                elif sink is not None:
                    while True:
                        chunk = resp.read(1 << 20)
                        if not chunk:
                            return None
                        sink.write(chunk)
                else:
                    out = resp.read()
                    if raw or not out:
                        return out
                    return json.loads(out)
            except (OSError, http.client.HTTPException) as e:
                self.close()
                err = str(e) or type(e).__name__
            # The server is away or restarting: the work done here is
            # reported when it is back.
            if time.monotonic() > deadline:
                raise Fatal("the job's ledger at %s could not be reached for 10 minutes: %s" % (path, err))
            log.debug("ledger %s %s: %s; again in %.1fs", method, path, err, delay)
            time.sleep(delay)
            delay = min(delay * 2, 5)

    @staticmethod
    def refusal(method, path, code, text):
        msg = text
        try:
            j = json.loads(text)
            msg = j.get("message") or j.get("error", {}).get("message") or text
        except (ValueError, AttributeError):
            pass
        if code == 401:
            return "the job's ledger refused this attempt's token (the attempt ended or was replaced): %s" % msg
        if code == 409 and path == "/plan":
            return ("input_data: this node lists the input differently from the plan the job already has "
                    "(the input changed under the job): %s" % msg)
        return "the job's ledger refused %s %s (%d): %s" % (method, path, code, msg)


# ------------------------------------------------------------ the input


def mini_batch_size(text, table):
    """Parses mini_batch_size as job.ParseMiniBatchSize does: for a table
    a bare number is bytes, as Azure's SDK sends "10kb" as 10240."""
    s = (text or "").strip().lower()
    if not s:
        return ("bytes", 1 << 20) if table else ("files", 10)
    try:
        for suffix, mult in (("kb", 1 << 10), ("mb", 1 << 20), ("gb", 1 << 30), ("b", 1)):
            if s.endswith(suffix):
                return "bytes", int(s[: -len(suffix)].strip()) * mult
        return ("bytes" if table else "files"), int(s)
    except ValueError:
        raise Fatal("mini_batch_size: %r is not a number of files or a size such as 10mb" % text) from None


def list_files(root):
    """Every file under root, sorted by path relative to it."""
    if os.path.isfile(root):
        return [(os.path.basename(root), root, os.path.getsize(root))]
    if not os.path.isdir(root):
        raise Fatal("input_data: the input is not a folder or file on this node (%s): "
                    "a parallel job's input_data is downloaded or mounted, not mode: direct" % root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames.sort()
        for f in filenames:
            p = os.path.join(dirpath, f)
            if os.path.isfile(p):
                out.append((os.path.relpath(p, root).replace(os.sep, "/"), p, os.path.getsize(p)))
    out.sort(key=lambda x: x[0])
    return out


def describe(items, count):
    """A mini-batch's short description: its first item and how many more."""
    if not items:
        return ""
    d = items[0] if count == 1 else "%s (+%d more)" % (items[0], count - 1)
    return d[:200]


def plan_files(task):
    root = task["input_path"]
    # (relative path, size) only: a listing of a million files is held
    # once, and a mini-batch's paths are made when it is leased.
    files = [(rel, size) for rel, _, size in list_files(root)]
    kind, n = mini_batch_size(task["spec"].get("mini_batch_size"), False)
    if kind != "files":
        raise Fatal("mini_batch_size: %r is a size, and the input is a %s of files: give a number of files"
                    % (task["spec"].get("mini_batch_size"), task["input_type"]))
    h = hashlib.sha256()
    for rel, size in files:
        h.update(("%s\t%d\n" % (rel, size)).encode())
    h.update(("batch %d\n" % n).encode())
    count = (len(files) + n - 1) // n
    plan = {"kind": "files", "items": len(files), "mini_batches": count, "fingerprint": h.hexdigest()}
    descr = [] if count > MAX_MINI_BATCHES else [
        describe([f[0] for f in files[i * n:i * n + 2]], min(n, len(files) - i * n)) for i in range(count)]
    single = os.path.isfile(root)

    def mini_batch(i):
        return {"kind": "files", "files": [[rel, root if single else os.path.join(root, rel)]
                                           for rel, _ in files[i * n:(i + 1) * n]]}
    return plan, descr, mini_batch


# A minimal YAML reader for MLTable files, used when PyYAML is missing:
# block mappings and sequences, flow {..} and [..] of scalars, quoted and
# plain scalars: what MLTable files hold.


def yaml_scalar(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    if s.startswith("{") and s.endswith("}"):
        out = {}
        for part in split_flow(s[1:-1]):
            k, _, v = part.partition(":")
            out[yaml_scalar(k)] = yaml_scalar(v)
        return out
    if s.startswith("[") and s.endswith("]"):
        return [yaml_scalar(p) for p in split_flow(s[1:-1])]
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "~", ""):
        return None
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    return s


def split_flow(s):
    parts, depth, cur, quote = [], 0, "", ""
    for c in s:
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def strip_comment(line):
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def yaml_load(text):
    lines = []
    for raw in text.splitlines():
        if len(raw) > 4096:
            raise ValueError("a line of %d characters; an MLTable file's lines are short" % len(raw))
        line = strip_comment(raw).rstrip()
        if line.strip() and line.strip() != "---":
            lines.append((len(line) - len(line.lstrip(" ")), line.strip()))
    value, _ = yaml_block(lines, 0, lines[0][0] if lines else 0)
    return value


def yaml_block(lines, i, indent):
    if i >= len(lines):
        return None, i
    if lines[i][1].startswith("- ") or lines[i][1] == "-":
        out = []
        while i < len(lines) and lines[i][0] == indent and (lines[i][1].startswith("- ") or lines[i][1] == "-"):
            rest = lines[i][1][1:].strip()
            if not rest:
                v, i = yaml_block(lines, i + 1, lines[i + 1][0] if i + 1 < len(lines) else indent + 2)
                out.append(v)
                continue
            # "- key: value" opens a mapping whose keys go on at the
            # column after the dash.
            sub = indent + 2 + (len(lines[i][1][1:]) - len(lines[i][1][1:].lstrip(" ")) - 1)
            lines[i] = (sub, rest)
            if yaml_key(rest) is not None:
                v, i = yaml_map(lines, i, sub)
            else:
                v, i = yaml_scalar(rest), i + 1
            out.append(v)
        return out, i
    if yaml_key(lines[i][1]) is not None:
        return yaml_map(lines, i, indent)
    return yaml_scalar(lines[i][1]), i + 1


def yaml_key(s):
    m = re.match(r"""^("[^"]*"|'[^']*'|[^\s'"{\[][^:]*?)\s*:(\s|$)""", s)
    return m


def yaml_map(lines, i, indent):
    out = {}
    while i < len(lines) and lines[i][0] == indent:
        m = yaml_key(lines[i][1])
        if m is None:
            raise ValueError("line %r is not a key: value" % lines[i][1])
        key = yaml_scalar(m.group(1))
        rest = lines[i][1][m.end():].strip()
        i += 1
        if rest:
            out[key] = yaml_scalar(rest)
        elif i < len(lines) and (lines[i][0] > indent or (lines[i][0] == indent and lines[i][1].startswith("-"))):
            out[key], i = yaml_block(lines, i, lines[i][0])
        else:
            out[key] = None
    return out, i


def read_mltable(root):
    path = os.path.join(root, "MLTable")
    if not os.path.isfile(path):
        raise Fatal("input_data: the mltable input has no MLTable file at its root (%s): an mltable folder "
                    "holds a file named MLTable that lists its paths and how to read them" % path)
    with open(path, encoding="utf-8") as f:
        text = f.read(1 << 20)
    try:
        import yaml  # noqa: PLC0415 (optional)
        doc = yaml.safe_load(text)
    except ImportError:
        doc = None
    except Exception as e:  # noqa: BLE001
        raise Fatal("input_data: the MLTable file is not valid YAML: %s" % e) from None
    if doc is None:
        try:
            doc = yaml_load(text)
        except (ValueError, IndexError, RecursionError) as e:
            raise Fatal("input_data: the MLTable file could not be read: %s" % e) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), list) or not doc["paths"]:
        raise Fatal("input_data: the MLTable file names no paths (want paths: - file: ./data.csv)")
    return doc


def glob_regex(pattern):
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return re.compile("^" + out + "$")


def inside(root, rel, field):
    rel = rel.strip()
    if "://" in rel:
        raise Fatal("input_data: the MLTable file's %s %r is a URI; Shoal reads an mltable's files from its own folder" % (field, rel))
    p = os.path.normpath(os.path.join(root, rel))
    if p != root and not p.startswith(root.rstrip("/") + "/"):
        raise Fatal("input_data: the MLTable file's %s %r is outside the mltable's folder" % (field, rel))
    return p


def table_files(root, doc):
    """The table's files from the MLTable's paths: (relative, path, size)."""
    every = [f for f in list_files(root) if f[0] != "MLTable"]
    out = {}
    for entry in doc["paths"]:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise Fatal("input_data: an MLTable paths entry is one of file:, folder: or pattern: (got %r)" % (entry,))
        (key, val), = entry.items()
        val = str(val)
        if key == "file":
            p = inside(root, val, "file")
            if not os.path.isfile(p):
                raise Fatal("input_data: the MLTable file names file %r, which the input does not hold" % val)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            out[rel] = (rel, p, os.path.getsize(p))
        elif key == "folder":
            p = inside(root, val, "folder")
            pre = os.path.relpath(p, root).replace(os.sep, "/")
            for f in every:
                if pre == "." or f[0].startswith(pre + "/"):
                    out[f[0]] = f
        elif key == "pattern":
            inside(root, val.split("*")[0] or ".", "pattern")
            rx = glob_regex(val[2:] if val.startswith("./") else val.lstrip("/"))
            for f in every:
                if rx.match(f[0]):
                    out[f[0]] = f
        else:
            raise Fatal("input_data: the MLTable paths entry %r is not file:, folder: or pattern:" % key)
    return [out[k] for k in sorted(out)]


ENCODINGS = {"utf8": "utf-8", "iso88591": "iso-8859-1", "latin1": "latin-1", "ascii": "ascii",
             "utf16": "utf-16", "utf32": "utf-32", "utf8bom": "utf-8-sig", "windows1252": "cp1252"}


def table_settings(doc):
    s = {"delimiter": ",", "header": "all_files_same_headers", "encoding": "utf-8",
         "include_path_column": False, "partition_format": None, "drop_columns": []}
    for t in doc.get("transformations") or []:
        if not isinstance(t, dict) or len(t) != 1:
            raise Fatal("input_data: an MLTable transformation is one key (got %r)" % (t,))
        (name, args), = t.items()
        args = args or {}
        if name == "read_delimited":
            s["delimiter"] = str(args.get("delimiter", ","))
            s["header"] = str(args.get("header", "all_files_same_headers"))
            enc = str(args.get("encoding", "utf8")).lower().replace("-", "").replace("_", "")
            s["encoding"] = ENCODINGS.get(enc, enc)
            s["include_path_column"] = bool(args.get("include_path_column", False))
        elif name == "extract_columns_from_partition_format":
            s["partition_format"] = str(args.get("partition_format") if isinstance(args, dict) else args)
        elif name == "drop_columns":
            s["drop_columns"] = args if isinstance(args, list) else [args]
        elif name in ("take", "skip", "filter", "convert_column_types", "keep_columns"):
            log.warning("the MLTable transformation %s is not applied by Shoal's driver", name)
        else:
            raise Fatal("input_data: the MLTable transformation %r is not one Shoal reads "
                        "(read_delimited, extract_columns_from_partition_format, drop_columns)" % name)
    if s["header"] not in ("all_files_same_headers", "from_first_file", "no_header", "all_files_different_headers"):
        raise Fatal("input_data: the MLTable read_delimited header %r is not all_files_same_headers, "
                    "from_first_file, all_files_different_headers or no_header" % s["header"])
    return s


def partition_columns(fmt, rel):
    """The columns a partition_format takes from a file's relative path."""
    if not fmt:
        return {}
    rx = "^"
    for lit, name in re.findall(r"([^{]*)(?:\{([^}]*)\})?", fmt.lstrip("./")):
        rx += re.escape(lit)
        if name:
            rx += "(?P<%s>[^/]*?)" % re.sub(r"\W", "_", name) if name not in ("file_name", "extension") else "[^/]*?"
    m = re.match(rx + "$", rel)
    return {k: v for k, v in (m.groupdict() if m else {}).items()}


def header_of(path, settings, index, first_header):
    mode = settings["header"]
    if mode == "no_header" or (mode == "from_first_file" and index > 0):
        return 0, first_header if mode == "from_first_file" else None
    with open(path, "rb") as f:
        line = f.readline()
    return len(line), line


def plan_rows(task, doc, settings):
    root = task["input_path"]
    files = table_files(root, doc)
    _, size = mini_batch_size(task["spec"].get("mini_batch_size"), True)  # bytes, a bare number too
    h = hashlib.sha256()
    batches, descr, items, first = [], [], 0, None
    for idx, (rel, p, fsize) in enumerate(files):
        start, header = header_of(p, settings, idx, first)
        if idx == 0:
            first = header
        h.update(("%s\t%d\n" % (rel, fsize)).encode())
        with open(p, "rb") as f:
            f.seek(start)
            pos = start
            while pos < fsize:
                f.seek(min(pos + size, fsize))
                if pos + size < fsize:
                    f.readline()
                end = f.tell()
                f.seek(pos)
                rows = sum(1 for line in io.BytesIO(f.read(end - pos)) if line.strip())
                if rows:
                    batches.append({"kind": "rows", "file": [rel, p], "start": pos, "end": end,
                                    "header": header.decode("latin-1") if header else None, "rows": rows})
                    descr.append(("%s bytes %d-%d (%d rows)" % (rel, pos, end, rows))[:200])
                    items += rows
                    h.update(("%d-%d\n" % (pos, end)).encode())
                pos = end
    plan = {"kind": "rows", "items": items, "mini_batches": len(batches), "fingerprint": h.hexdigest()}
    return plan, descr, lambda i: dict(batches[i], settings=settings)


def table_records(files, settings):
    """Yields each row of the table as a dict of strings (csv module)."""
    import csv  # noqa: PLC0415

    first = None
    for idx, (rel, p, _) in enumerate(files):
        with open(p, encoding=settings["encoding"], newline="") as f:
            reader = csv.reader(f, delimiter=settings["delimiter"])
            mode = settings["header"]
            if mode == "no_header":
                names = None
            elif mode == "from_first_file" and idx > 0:
                names = first
            else:
                names = next(reader, None)
                first = first or names
            extra = partition_columns(settings["partition_format"], rel)
            for row in reader:
                if not row:
                    continue
                cols = names or ["Column%d" % (i + 1) for i in range(len(row))]
                rec = dict(zip(cols, row))
                rec.update(extra)
                yield rec


def plan_partitions(task, doc, settings):
    keys = task["spec"]["partition_keys"]
    files = table_files(task["input_path"], doc)
    counts = {}
    for rec in table_records(files, settings):
        missing = [k for k in keys if k not in rec]
        if missing:
            raise Fatal("partition_keys: the table has no column %s (its columns: %s)"
                        % (", ".join(missing), ", ".join(sorted(rec))))
        v = tuple(rec[k] for k in keys)
        counts[v] = counts.get(v, 0) + 1
    values = sorted(counts)
    h = hashlib.sha256()
    for rel, _, size in files:
        h.update(("%s\t%d\n" % (rel, size)).encode())
    for v in values:
        h.update(("%r\t%d\n" % (v, counts[v])).encode())
    plan = {"kind": "partitions", "items": sum(counts.values()), "mini_batches": len(values),
            "fingerprint": h.hexdigest()}
    descr = [("%s (%d rows)" % (", ".join("%s=%s" % kv for kv in zip(keys, v)), counts[v]))[:200] for v in values]
    return plan, descr, lambda i: {"kind": "partitions", "files": [[f[0], f[1]] for f in files],
                                   "keys": keys, "values": list(values[i]), "rows": counts[values[i]],
                                   "settings": settings}


def make_plan(task):
    t = task["input_type"]
    if t in ("uri_folder", "uri_file"):
        return plan_files(task)
    if t == "mltable":
        root = task["input_path"]
        if not os.path.isdir(root):
            raise Fatal("input_data: the mltable input is not a folder on this node (%s)" % root)
        doc = read_mltable(root)
        settings = table_settings(doc)
        if task["spec"].get("partition_keys"):
            return plan_partitions(task, doc, settings)
        return plan_rows(task, doc, settings)
    raise Fatal("input_data: a %s input cannot be split; want uri_folder, uri_file or mltable" % t)


# ----------------------------------------------------------- the worker


class Context:
    """run(mini_batch, mini_batch_context)'s second argument, as Azure's."""

    def __init__(self, index, partition_key_value, dataset):
        self.minibatch_index = index
        self.mini_batch_index = index
        self.partition_key_value = partition_key_value
        self.dataset = dataset


def need_pandas():
    try:
        import pandas  # noqa: PLC0415
    except ImportError:
        raise Fatal("input_data is an mltable: run(mini_batch) gets a pandas DataFrame, and the job's "
                    "environment has no pandas (add pandas to its conda file or image)") from None
    return pandas


def table_frame(pd, text_parts, settings, extra, as_text=False):
    """The rows as a DataFrame: types inferred, or (as_text) every value
    the text the file holds, as the plan's csv reading saw it."""
    header = settings["header"] != "no_header"
    text = {"dtype": str, "keep_default_na": False, "na_filter": False} if as_text else {}
    df = pd.read_csv(io.BytesIO(b"".join(text_parts)), sep=settings["delimiter"], encoding=settings["encoding"],
                     header=0 if header else None, **text)
    if not header:
        df.columns = ["Column%d" % (i + 1) for i in range(len(df.columns))]
    for k, v in extra.items():
        df[k] = v
    return df


def finish_frame(df, settings, rel):
    if settings.get("include_path_column"):
        df["Path"] = rel
    drop = [c for c in settings.get("drop_columns") or [] if c in df.columns]
    return df.drop(columns=drop) if drop else df


def build_mini_batch(mb, input_path):
    """The mini-batch as run gets it, its items' names and its context."""
    if mb["kind"] == "files":
        return [f[1] for f in mb["files"]], [f[0] for f in mb["files"]], None
    pd = need_pandas()
    s = mb["settings"]
    if mb["kind"] == "rows":
        rel, p = mb["file"]
        with open(p, "rb") as f:
            f.seek(mb["start"])
            body = f.read(mb["end"] - mb["start"])
        head = mb["header"].encode("latin-1") if mb["header"] else b""
        if head and not head.endswith(b"\n"):
            head += b"\n"
        df = table_frame(pd, [head, body], s, partition_columns(s["partition_format"], rel))
        df = finish_frame(df, s, rel)
        return df, ["%s:%d+%d" % (rel, mb["start"], i) for i in range(len(df))], None
    frames = []
    for idx, (rel, p) in enumerate(mb["files"]):
        with open(p, "rb") as f:
            body = f.read()
        head = b""
        if s["header"] == "from_first_file" and idx > 0:
            with open(mb["files"][0][1], "rb") as f:
                head = f.readline()
        extra = partition_columns(s["partition_format"], rel)
        df = table_frame(pd, [head, body], s, extra)
        # The partition's rows are picked by the keys' text, as the plan
        # counted them (1.50 stays 1.50, NA stays NA), then handed over
        # with their inferred types.
        raw = table_frame(pd, [head, body], s, extra, as_text=True)
        mask = pd.Series(True, index=raw.index)
        for k, v in zip(mb["keys"], mb["values"]):
            mask &= raw[k] == v
        frames.append(finish_frame(df[mask.values], s, rel))
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    df = df.reset_index(drop=True)
    key = dict(zip(mb["keys"], mb["values"]))
    return df, ["%s row %d" % (key, i) for i in range(len(df))], key


def item_names(mb):
    """The names of a mini-batch's items as the plan knows them, for a try
    whose worker gave none (it died, or outlived its timeout)."""
    if mb["kind"] == "files":
        return [f[0] for f in mb["files"]]
    if mb["kind"] == "rows":
        return ["%s:%d+%d" % (mb["file"][0], mb["start"], i) for i in range(mb["rows"])]
    key = dict(zip(mb["keys"], mb["values"]))
    return ["%s row %d" % (key, i) for i in range(mb["rows"])]


def as_rows(result, kind):
    """run's result as text lines: str(x) of a list's items, a DataFrame's
    rows space-separated without header or index."""
    if result is None:
        raise TypeError("run returned None; it must return a list or a pandas DataFrame, one row per item")
    if hasattr(result, "to_csv") and hasattr(result, "columns"):
        if not len(result):
            return []
        lines = result.to_csv(sep=" ", header=False, index=False).split("\n")[:-1]
        if len(lines) != len(result):
            # A value holds a line break: each row on its own, as one line.
            lines = [result.iloc[[i]].to_csv(sep=" ", header=False, index=False).rstrip("\n")
                     for i in range(len(result))]
        return [one_line(r) for r in lines]
    if isinstance(result, (str, bytes)):
        raise TypeError("run returned a %s; it must return a list or a pandas DataFrame, one row per item"
                        % type(result).__name__)
    return [one_line(str(x)) for x in result]


def one_line(row):
    """A row as one line of text the ledger keeps: line breaks and NUL
    (which PostgreSQL's text cannot hold) written as escapes."""
    return row.replace("\r", "\\r").replace("\n", "\\n").replace("\x00", "\\0")


def error_text(e):
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return ("".join(tb[-4:]).strip())[-ERROR_CHARS:]


def worker_main():
    rfd, wfd = (int(x) for x in os.environ.pop(WORKER_ENV).split(","))
    inp = os.fdopen(rfd, "r", encoding="utf-8")
    out = os.fdopen(wfd, "w", encoding="utf-8")

    def send(msg):
        out.write(json.dumps(msg) + "\n")
        out.flush()

    cfg = json.loads(inp.readline())
    logging.basicConfig(level=cfg["level"], format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    script = cfg["entry_script"]
    path = os.path.join(cfg["code_dir"], script)
    sys.argv = [script] + cfg["argv"]
    sys.path.insert(0, os.path.dirname(path))
    try:
        if cfg["table"]:
            need_pandas()
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(script))[0], path)
        if spec is None or not os.path.isfile(path):
            raise Fatal("entry_script: %s is not a file of the job's code" % script)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:  # noqa: BLE001
            raise Fatal("entry_script: importing %s failed: %s" % (script, error_text(e))) from None
        missing = [f for f in ("init", "run") if not callable(getattr(mod, f, None))]
        if missing:
            raise Fatal("entry_script: %s defines no %s(): a parallel job's entry script defines init() "
                        "and run(mini_batch)" % (script, "() and no ".join(missing)))
        try:
            two = len([p for p in inspect.signature(mod.run).parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 2
        except (TypeError, ValueError):
            two = False
        try:
            mod.init()
        except Exception as e:  # noqa: BLE001
            raise Fatal("entry_script: %s's init() raised: %s" % (script, error_text(e))) from None
    except Fatal as e:
        send({"fatal": str(e)})
        return 1
    send({"ready": True})
    while True:
        line = inp.readline()
        if not line:
            return 0
        mb = json.loads(line)
        res = {"index": mb["index"], "items": 0}
        try:
            batch, names, key = build_mini_batch(mb, cfg["input_path"])
        except Fatal as e:
            send(dict(res, outcome="failed", error=str(e), names=item_names(mb), items=len(item_names(mb))))
            continue
        except Exception as e:  # noqa: BLE001
            send(dict(res, outcome="failed", error="reading the mini-batch failed: " + error_text(e),
                      names=item_names(mb), items=len(item_names(mb))))
            continue
        res["items"], res["names"] = len(names), names
        try:
            if two:
                result = mod.run(batch, Context(mb["index"], key, cfg["input_path"]))
            else:
                result = mod.run(batch)
            rows = as_rows(result, mb["kind"])
        except Exception as e:  # noqa: BLE001
            send(dict(res, outcome="failed", error=error_text(e)))
            continue
        send(dict(res, outcome="done", rows=rows))


def answered(w):
    """Whether w's answer waits to be read: a worker that returned while
    the driver was busy (another worker's init) did not outlive its
    timeout."""
    return bool(select.select([w.r], [], [], 0)[0])


class Worker:
    """One worker process and the mini-batch it runs."""

    def __init__(self, driver, cfg):
        self.driver, self.cfg = driver, cfg
        self.busy = None  # (lease, started)
        self.start()

    def start(self):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ, **{WORKER_ENV: "%d,%d" % (to_child_r, from_child_w)})
        # What run prints reaches the rank's log as it prints it, not
        # lost in a buffer when a worker past its timeout is killed.
        env.setdefault("PYTHONUNBUFFERED", "1")
        # In the rank's own process group: the agent ends the rank by
        # signalling that group, and a worker must end with it.
        self.proc = subprocess.Popen([sys.executable, self.driver], env=env, pass_fds=(to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        self.w = os.fdopen(to_child_w, "w", encoding="utf-8")
        self.r = os.fdopen(from_child_r, "r", encoding="utf-8")
        self.send(self.cfg)

    def send(self, msg):
        self.w.write(json.dumps(msg) + "\n")
        self.w.flush()

    def ready(self):
        line = self.r.readline()
        if not line:
            raise Fatal("a worker process ended (exit code %s) before its entry script's init() returned"
                        % self.proc.wait())
        msg = json.loads(line)
        if "fatal" in msg:
            raise Fatal(msg["fatal"])

    def kill(self):
        try:
            self.proc.send_signal(signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.w.close()
        self.r.close()


# ------------------------------------------------------------ the driver


def output_files(task):
    """Files under the job's output folders: relative path → (mtime, size),
    the append and errors files left out (rank 0 writes them)."""
    out = {}
    root = task["outputs_dir"]
    skip = {task.get("append_path"), task.get("errors_path")}
    for name in task.get("outputs") or []:
        d = os.path.join(root, name)
        for dirpath, dirnames, filenames in os.walk(d):
            dirnames.sort()
            for f in filenames:
                p = os.path.join(dirpath, f)
                if p in skip or os.path.islink(p):
                    continue
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out[os.path.relpath(p, root).replace(os.sep, "/")] = (st.st_mtime_ns, st.st_size)
    return out


def create(path):
    """A file the driver writes in the job's outputs: the job's account's
    alone (0600), as the agent makes the job's folders."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")


def safe_unpack(data, root, outputs):
    """Unpacks a tar (a file) of output files into root: regular files and
    folders under the job's output names only."""
    with tarfile.open(fileobj=data, mode="r:*") as tf:
        for m in tf:
            name = os.path.normpath(m.name.lstrip("./") or ".")
            top = name.split("/")[0]
            if name.startswith("..") or os.path.isabs(m.name) or top not in outputs or name == top:
                if not m.isdir():
                    log.warning("a posted file %r is not under an output folder; left out", m.name)
                continue
            dst = os.path.join(root, name)
            if m.isdir():
                os.makedirs(dst, 0o700, exist_ok=True)
            elif m.isfile():
                os.makedirs(os.path.dirname(dst), 0o700, exist_ok=True)
                if os.path.islink(dst):
                    os.unlink(dst)
                src = tf.extractfile(m)
                with create(dst) as f:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        f.write(chunk)


class Driver:
    def __init__(self, task, argv):
        self.task, self.argv = task, argv
        self.spec = task["spec"]
        self.rank = task["rank"]
        self.ledger = Ledger(task["url"], task["token"], self.rank)
        self.posted = output_files(task)
        self.workers = []
        # ran counts the tries this rank ran, failed those that failed.
        self.ran = self.failed = 0

    def post_files(self):
        now = output_files(self.task)
        changed = sorted(k for k, v in now.items() if self.posted.get(k) != v)
        if not changed:
            return
        with tempfile.TemporaryFile() as buf:
            with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w") as tf:
                for rel in changed:
                    try:
                        tf.add(os.path.join(self.task["outputs_dir"], rel), arcname=rel, recursive=False)
                    except OSError:
                        continue
            self.ledger.call("POST", "/files", buf, ctype="application/x-tar", raw=True)
        self.posted.update({k: now[k] for k in changed})

    def complete(self, lease, res):
        req = {"rank": self.rank, "index": lease["index"], "try": lease["try"], "outcome": res["outcome"],
               "items": res.get("items", 0)}
        names = res.get("names") or []
        if res["outcome"] == "done":
            rows = res["rows"]
            if res.get("kind") == "files" and len(rows) > len(names):
                req["outcome"] = "failed"
                req["error"] = ("run returned %d rows for a mini-batch of %d files: it must return at most one "
                                "row per file" % (len(rows), len(names)))
                req["failed_items"] = [{"item": n, "error": req["error"][:500]} for n in names]
            else:
                req["rows"] = rows
                if len(rows) < len(names):
                    why = "run returned %d rows for %d items: none for this one" % (len(rows), len(names))
                    req["failed_items"] = [{"item": n, "error": why} for n in names[len(rows):]]
        else:
            req["error"] = res.get("error", "")
            req["failed_items"] = [{"item": n, "error": req["error"][:500]} for n in names]
        if req["outcome"] != "done":
            self.failed += 1
        self.post_files()
        ans = self.ledger.call("POST", "/complete", req)
        log.debug("mini-batch %d try %d: %s → %s", lease["index"], lease["try"], req["outcome"], ans.get("state"))
        return ans.get("abort") or ""

    def run(self):
        level = (self.spec.get("logging_level") or "INFO").upper()
        cfg = {"level": level, "entry_script": self.spec["entry_script"], "code_dir": self.task["code_dir"],
               "argv": self.argv, "table": self.task["input_type"] == "mltable",
               "input_path": self.task["input_path"]}
        n = max(1, int(self.spec.get("max_concurrency_per_instance") or 1))
        plan, descr, mini_batch = make_plan(self.task)
        if plan["mini_batches"] == 0:
            raise Fatal("input_data: the input holds no %s to score (%s)"
                        % ("rows" if plan["kind"] != "files" else "files", self.task["input_path"]))
        if plan["mini_batches"] > MAX_MINI_BATCHES:
            raise Fatal("mini_batch_size: the input makes %d mini-batches, past the %d a job may have: "
                        "raise mini_batch_size" % (plan["mini_batches"], MAX_MINI_BATCHES))
        for i in range(n):
            self.workers.append(Worker(self.driver_path(), cfg))
        for w in self.workers:
            w.ready()
        got = self.ledger.call("POST", "/plan", dict(plan, rank=self.rank, describe=descr))
        log.info("plan: %d %s in %d mini-batches", got["items"], "files" if got["kind"] == "files" else "rows",
                 got["mini_batches"])
        timeout = int((self.spec.get("retry_settings") or {}).get("timeout") or 60)
        sel = selectors.DefaultSelector()
        for w in self.workers:
            sel.register(w.r, selectors.EVENT_READ, w)
        next_lease = 0.0
        while True:
            idle = [w for w in self.workers if w.busy is None]
            busy = [w for w in self.workers if w.busy is not None]
            if idle and time.monotonic() >= next_lease:
                ans = self.ledger.call("POST", "/lease", {"rank": self.rank, "max": len(idle)})
                state = ans.get("state")
                if state == "work":
                    for w, lease in zip(idle, ans.get("leases") or []):
                        if not 0 <= lease["index"] < plan["mini_batches"]:
                            raise Fatal("the ledger leased mini-batch %d of a plan of %d" % (lease["index"], plan["mini_batches"]))
                        self.ran += 1
                        mb = dict(mini_batch(lease["index"]), index=lease["index"])
                        w.busy = (lease, time.monotonic(), mb)
                        w.send(mb)
                    if ans.get("leases"):
                        continue
                if state == "abort":
                    return self.abort(ans.get("message") or "the job's error threshold was passed")
                if state == "done" and not busy:
                    return self.done()
                next_lease = time.monotonic() + float(ans.get("wait_seconds") or 1)
            wait = next_lease - time.monotonic() if idle else None
            for w in busy:
                left = w.busy[1] + timeout - time.monotonic()
                wait = left if wait is None else min(wait, left)
            for key, _ in sel.select(timeout=max(0.0, wait) if wait is not None else None):
                w = key.data
                line = w.r.readline()
                if w.busy is None:
                    if not line:
                        # An idle worker died (something killed it):
                        # another takes its place.
                        log.warning("an idle worker ended (exit code %s); another starts", w.proc.wait())
                        self.replace(sel, w)
                    continue
                lease, _, mb = w.busy
                if not line:
                    code = w.proc.wait()
                    res = {"outcome": "failed", "error": "the worker process running the mini-batch ended "
                                                         "(exit code %s) before run returned" % code}
                    res["names"] = item_names(mb)
                    res["items"] = len(res["names"])
                    self.replace(sel, w)
                else:
                    res = json.loads(line)
                    w.busy = None
                res["kind"] = mb["kind"]
                abort = self.complete(lease, res)
                if abort:
                    return self.abort(abort)
                # A worker is free again: it asks for work now, not when
                # the last wait the ledger gave runs out (that mini-batch
                # may have been the job's last).
                next_lease = 0.0
            for w in list(self.workers):
                if w.busy is not None and time.monotonic() - w.busy[1] >= timeout and not answered(w):
                    lease, _, mb = w.busy
                    names = item_names(mb)
                    log.warning("mini-batch %d outlived retry_settings.timeout (%ds): its worker is killed",
                                lease["index"], timeout)
                    self.replace(sel, w)
                    abort = self.complete(lease, {"outcome": "timeout", "names": names, "items": len(names),
                                                  "error": "run(mini_batch) outlived retry_settings.timeout "
                                                           "of %d seconds" % timeout})
                    if abort:
                        return self.abort(abort)

    def replace(self, sel, w):
        sel.unregister(w.r)
        w.kill()
        w.busy = None
        w.start()
        w.ready()
        sel.register(w.r, selectors.EVENT_READ, w)

    def driver_path(self):
        return os.path.abspath(__file__)

    def stop_workers(self):
        for w in self.workers:
            w.kill()
        self.workers = []

    def write_outputs(self):
        """Rank 0: every posted file, the rows and the errors."""
        with tempfile.TemporaryFile() as data:
            self.ledger.call("GET", "/files", sink=data)
            if data.tell():
                data.seek(0)
                safe_unpack(data, self.task["outputs_dir"], set(self.task.get("outputs") or []))
        ap = self.task.get("append_path")
        if ap:
            os.makedirs(os.path.dirname(ap), 0o700, exist_ok=True)
            with create(ap) as f:
                self.ledger.call("GET", "/rows", sink=f)
        ep = self.task["errors_path"]
        os.makedirs(os.path.dirname(ep), 0o700, exist_ok=True)
        tmp = ep + ".part"
        with create(tmp) as f:
            self.ledger.call("GET", "/errors", sink=f)
        if os.path.getsize(tmp):
            os.replace(tmp, ep)
        else:
            os.unlink(tmp)

    def done(self):
        self.stop_workers()
        log.info("every mini-batch is finished; this rank ran %d tries, %d of them failed", self.ran, self.failed)
        if self.rank == 0:
            self.write_outputs()
            log.info("every mini-batch is finished; the outputs are written")
        return 0

    def abort(self, message):
        self.stop_workers()
        if self.rank == 0:
            try:
                self.write_outputs()
            except Fatal as e:
                log.error("%s", e)
        print("shoal parallel: the job stops: %s" % message, file=sys.stderr, flush=True)
        return 1


def main():
    if WORKER_ENV in os.environ:
        return worker_main()
    raw = os.environ.pop(TASK_ENV, None)
    if not raw:
        print("shoal parallel: %s is not set: this driver runs as a parallel job's command" % TASK_ENV,
              file=sys.stderr)
        return 2
    task = json.loads(raw)
    level = (task["spec"].get("logging_level") or "INFO").upper()
    logging.basicConfig(level=getattr(logging, level, logging.INFO),
                        format="%(asctime)s %(levelname)s shoal parallel rank " + str(task["rank"]) + ": %(message)s")
    # Azure's batch scoring scripts read these (the workers inherit them).
    if task.get("model_dir"):
        os.environ["AZUREML_MODEL_DIR"] = task["model_dir"]
    if task.get("output_dir"):
        os.environ["AZUREML_BI_OUTPUT_PATH"] = task["output_dir"]
    d = Driver(task, sys.argv[1:])
    try:
        return d.run()
    except Fatal as e:
        d.stop_workers()
        print("shoal parallel: %s" % e, file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
