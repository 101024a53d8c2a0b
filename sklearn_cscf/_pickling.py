"""Pickling the user callables that actions and feature graphs hold.

The standard pickler stores a function by reference (its module and name), so
it cannot store lambdas, closures or nested functions, and a function defined
in ``__main__`` (a script, a notebook) only loads where that ``__main__``
defines it again. :func:`portable` leaves every callable the standard pickler
stores by reference as it is and wraps the others, so that ``cloudpickle``
stores them by value (their code and the variables they close over).
"""

import copy
import pickle
import types

import cloudpickle


class _NullFile:
    """A file that forgets what is written: the trial pickler's sink."""

    def write(self, data):
        return len(data)


class _ByReferencePickler(pickle.Pickler):
    """The standard pickler, refusing functions and classes of ``__main__``."""

    def reducer_override(self, obj):
        # functions and classes are what the standard pickler stores by name
        if isinstance(obj, type | types.FunctionType) and obj.__module__ == "__main__":
            raise pickle.PicklingError(f"{obj!r} is defined in __main__")
        return NotImplemented


def _is_stored_by_reference(fn):
    """Whether the standard pickler stores ``fn`` so that it loads anywhere."""
    try:
        _ByReferencePickler(_NullFile(), protocol=pickle.HIGHEST_PROTOCOL).dump(fn)
    except Exception:  # whatever the reason, cloudpickle gets its chance
        return False
    return True


def _load_by_value(payload):
    """The callable that :class:`ByValue` stored."""
    return cloudpickle.loads(payload)


class ByValue:
    """Stand-in that pickles a callable with cloudpickle, by value.

    Unpickling gives the callable itself, never this wrapper (a pickler that
    must pickle the callable itself, as the checkpoints' fingerprint does,
    finds it by this type: cloudpickle's own bytes are not stable).
    """

    def __init__(self, fn, what):
        self.fn = fn
        self.what = what

    def __reduce__(self):
        try:
            payload = cloudpickle.dumps(self.fn)
        except Exception as exc:
            raise pickle.PicklingError(
                f"{self.what} {self.fn!r} cannot be pickled, not even by value "
                f"with cloudpickle: {type(exc).__name__}: {exc}. Make it a "
                "module-level function or a callable object that pickles, "
                "without unpicklable variables (locks, open files, connections)."
            ) from exc
        return _load_by_value, (payload,)


def portable(fn, what):
    """``fn`` as it is when the standard pickler can store it, else a stand-in.

    Parameters
    ----------
    fn : callable or None
        A user callable (cost, effect, condition, tau).
    what : str
        Names the callable in errors, e.g. ``"Action 'save': cost"``.

    Returns
    -------
    callable, ByValue or None
        Module-level functions, callable objects of importable classes and
        ``functools.partial`` of those stay as they are (stored by reference);
        lambdas, closures, nested functions and anything defined in
        ``__main__`` are wrapped to be stored by value.
    """
    if fn is None or _is_stored_by_reference(fn):
        return fn
    return ByValue(fn, what)


class PortableCallables:
    """Base of the objects holding user callables.

    Subclasses define ``__getstate__`` with :func:`portable` around each
    callable. ``copy.copy`` and ``copy.deepcopy`` (and so ``sklearn.clone``)
    do not pickle: they copy the attributes as Python's defaults would, and a
    deep copy shares functions, as Python's does.
    """

    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new
