"""STAND-IN for pydash.objects (see the package's docstring)."""


def set_(obj, path, value):
    """pydash.objects.set_: sets value at path (dotted string or key list),
    creating dicts on the way; returns obj."""
    keys = path if isinstance(path, (list, tuple)) else str(path).split(".")
    cur = obj
    for key in keys[:-1]:
        if isinstance(cur, dict):
            cur = cur.setdefault(key, {})
        else:
            if getattr(cur, key, None) is None:
                setattr(cur, key, {})
            cur = getattr(cur, key)
    if isinstance(cur, dict):
        cur[keys[-1]] = value
    else:
        setattr(cur, keys[-1], value)
    return obj
