"""STAND-IN for the pydash package, which Debian does not package and which
cannot be installed here. azure-ai-ml 1.4.0 imports pydash and uses three of
its functions; this module provides exactly those, with pydash's semantics
for the paths azure-ai-ml passes ("a.b.c" strings or lists of keys). It is
put on PYTHONPATH by Shoal's Python SDK tests only; nothing of the Azure SDK
itself is patched."""

from . import objects  # noqa: F401  (pydash.objects.set_)


def _path(path):
    if isinstance(path, (list, tuple)):
        return list(path)
    return str(path).split(".") if path != "" else []


def get(obj, path, default=None):
    """pydash.get: the value at path (dotted string or key list), or default."""
    cur = obj
    for key in _path(path):
        if isinstance(cur, dict):
            if key not in cur:
                return default
            cur = cur[key]
        elif isinstance(cur, (list, tuple)):
            try:
                cur = cur[int(key)]
            except (ValueError, IndexError):
                return default
        else:
            if not hasattr(cur, str(key)):
                return default
            cur = getattr(cur, str(key))
    return cur


def omit(obj, *paths):
    """pydash.omit: a shallow copy of dict obj without the given keys (or
    dotted paths)."""
    import copy
    out = copy.deepcopy(obj) if isinstance(obj, dict) else dict(obj)
    for p in paths:
        keys = p if isinstance(p, (list, tuple)) else [p]
        for k in keys:
            parts = _path(k)
            cur = out
            for part in parts[:-1]:
                cur = cur.get(part) if isinstance(cur, dict) else None
                if cur is None:
                    break
            if isinstance(cur, dict) and parts:
                cur.pop(parts[-1], None)
    return out
