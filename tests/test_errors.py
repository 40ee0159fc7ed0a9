"""Every exception the provider defines is under one root, in its room's family; so is
every exception of its sandbox (``tronenergy_sandbox``) and of the code both share
(``tronenergy_protocol``, where the root is defined), distributions of their own."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import warnings
from pathlib import Path

import pytest

import airflow_provider_tronenergy as package
import tronenergy_protocol
import tronenergy_protocol.errors
import tronenergy_sandbox
from airflow_provider_tronenergy import errors
from airflow_provider_tronenergy.errors import (
    CallbackError,
    ProtocolError,
    TronEnergyProviderError,
)


def _modules() -> list[str]:
    names = []
    for home in (package, tronenergy_protocol, tronenergy_sandbox):
        for info in pkgutil.walk_packages(home.__path__, home.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] != "__main__":  # a console script runs on import
                names.append(info.name)
    return names


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    todo = [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


@pytest.fixture(scope="module")
def provider_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class the package and the sandbox define, by dotted name, every
    module imported."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # moved names still importable
        for name in _modules():
            importlib.import_module(name)
    return {f"{cls.__module__}.{cls.__qualname__}": cls
            for cls in _subclasses(BaseException)
            if cls.__module__.startswith((package.__name__ + ".",
                                          tronenergy_protocol.__name__ + ".",
                                          tronenergy_sandbox.__name__ + "."))}


def test_every_provider_exception_is_under_the_root(provider_exceptions):
    assert len(provider_exceptions) > 40  # the walk found the package, not nothing
    outside = sorted(name for name, cls in provider_exceptions.items()
                     if not issubclass(cls, TronEnergyProviderError))
    assert outside == []


def test_the_node_is_not_the_service():
    from airflow_provider_tronenergy.client.errors import TronEnergyError
    from airflow_provider_tronenergy.node.errors import NodeError

    assert issubclass(TronEnergyError, TronEnergyProviderError)
    assert issubclass(NodeError, TronEnergyProviderError)
    assert not issubclass(NodeError, TronEnergyError)
    assert not issubclass(TronEnergyError, NodeError)


def test_the_tree_in_the_docs_is_the_classes(provider_exceptions):
    """docs/architecture.md draws the tree from the classes: a new class, a moved one or a
    changed base fails here until ``python tests/support/error_tree.py`` redraws it."""
    from support import error_tree

    drawn = error_tree.draw()
    public = {cls.__name__ for cls in provider_exceptions.values()
              if not cls.__name__.startswith("_")}
    assert sorted(name for name in public if name not in drawn) == []  # nothing left out
    assert error_tree.in_docs() == drawn, "run: python tests/support/error_tree.py"


def test_the_drawing_sees_a_class_move():
    """The check above could pass on a blind reader: a changed block is told apart."""
    from support import error_tree

    text = error_tree.DOCS.read_text(encoding="utf-8")
    assert error_tree.in_docs(text.replace("SpendRefused (RuntimeError)",
                                           "SpendRefused (ValueError)")) != error_tree.draw()


SANDBOX_ERROR = "tronenergy_sandbox.errors.SandboxError"
PROTOCOL_ERROR = "tronenergy_protocol.errors.ProtocolError"


@pytest.mark.parametrize(("dotted", "builtin", "room"), [
    ("client.errors.ValidationError", ValueError, "client.errors.TronEnergyError"),
    ("client.bounded.BodyError", ValueError, None),
    ("client.deadline.DeadlineExceeded", TimeoutError, None),
    ("tronenergy_protocol.address.AddressError", ValueError, PROTOCOL_ERROR),
    ("tronenergy_protocol.numbers.NumberError", ValueError, PROTOCOL_ERROR),
    ("hooks.tronenergy.TronEnergyConnectionError", ValueError, "errors.NotRetryable"),
    ("hooks.tron_node.TronNodeConnectionError", ValueError,
     "hooks.tronenergy.TronEnergyConnectionError"),
    ("purchase_journal.store.JournalError", RuntimeError, None),
    ("purchase_journal.store.JournalRace", RuntimeError, "purchase_journal.store.JournalError"),
    ("purchase_journal.verify.OrderMismatch", RuntimeError, "purchase_journal.store.JournalError"),
    ("purchase_journal.identity.IdentityError", ValueError, None),
    ("sqlstore.StoreError", RuntimeError, None),
    ("sqlstore.StoreNotShared", RuntimeError, "errors.NotRetryable"),
    ("sqlstore.StoreSettingError", RuntimeError, "errors.NotRetryable"),
    ("callbacks.config.ConfigError", ValueError, "errors.CallbackError"),
    ("callbacks.batcher.Overloaded", RuntimeError, "errors.CallbackError"),
    ("callbacks.batcher.CommitTimeout", RuntimeError, "errors.CallbackError"),
    ("callbacks.verify.Rejection", Exception, "errors.CallbackError"),
    ("tronenergy_sandbox.errors.WorldError", Exception, SANDBOX_ERROR),
    ("tronenergy_sandbox.control.ForbiddenError", Exception, SANDBOX_ERROR),
    ("tronenergy_sandbox.chain.parameters.ParameterError", ValueError, SANDBOX_ERROR),
    ("tronenergy_sandbox.chain.jsonbytes.CodecError", ValueError, SANDBOX_ERROR),
    ("payout.funds.FundsInFlight", RuntimeError, None),
    ("money.guard.SpendRefused", RuntimeError, "errors.NotRetryable"),
    ("purchase.outcomes.PurchaseStopped", RuntimeError, "errors.NotRetryable"),
    ("purchase.outcomes.PurchaseRetry", RuntimeError, "errors.Retryable"),
    ("keeper.policy.KeeperPolicyError", ValueError, "errors.NotRetryable"),
    ("keeper.keep.KeeperBlind", RuntimeError, "errors.Retryable"),
])
def test_a_class_keeps_the_builtin_base_its_callers_catch(provider_exceptions, dotted, builtin,
                                                          room):
    def full(name: str) -> str:  # the package's relative, the other distributions' in full
        if name.startswith(("tronenergy_sandbox.", "tronenergy_protocol.")):
            return name
        return f"{package.__name__}.{name}"

    cls = provider_exceptions[full(dotted)]
    assert issubclass(cls, builtin)
    if room is not None:
        assert issubclass(cls, provider_exceptions[full(room)])


def test_room_roots_are_their_rooms_only():
    assert issubclass(ProtocolError, ValueError)
    assert not issubclass(CallbackError, (ValueError, RuntimeError))


def test_the_root_module_imports_nothing_of_the_package():
    tree = ast.parse(Path(errors.__file__).read_text())
    imported = [node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names]
    assert [name for name in imported if name.startswith(package.__name__)] == []


def test_the_shared_root_is_the_providers_one_and_imports_nothing():
    """One tree: the root and ``ProtocolError`` the shared code defines are the classes
    users import from the provider's errors.py (the public place), not copies; the shared
    module imports nothing, so the protocol and the sandbox raise under it without Airflow."""
    assert errors.TronEnergyProviderError is tronenergy_protocol.errors.TronEnergyProviderError
    assert errors.ProtocolError is tronenergy_protocol.errors.ProtocolError
    assert {"TronEnergyProviderError", "ProtocolError"} <= set(errors.__all__)
    assert issubclass(errors.NotRetryable, tronenergy_protocol.errors.TronEnergyProviderError)
    tree = ast.parse(Path(tronenergy_protocol.errors.__file__).read_text(encoding="utf-8"))
    assert [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")] == []


def test_a_node_error_names_its_status_and_survives_pickling():
    from airflow_provider_tronenergy.node.errors import NodeError

    error = NodeError("node call wallet/getaccount failed", status=503,
                      path="wallet/getaccount")
    assert str(error) == "node call wallet/getaccount failed (HTTP 503)"
    assert repr(error) == "NodeError('node call wallet/getaccount failed (HTTP 503)')"
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.status, copy.path) == (str(error), 503, "wallet/getaccount")
    assert str(NodeError("node call x failed", path="x")) == "node call x failed"


SEND_PATH = ("attempts", "batch", "estimates", "funds", "journal", "lease", "preflight",
             "receipts", "rows", "send", "steps", "trust", "verdict", "watch")


@pytest.mark.parametrize("module", SEND_PATH)
def test_the_payout_send_path_raises_the_providers_errors_only(module):
    """The modules a payout round runs through import nothing of Airflow: their errors are
    the provider's, and ``verdicts.payout.task_verdict`` alone makes them the
    task's verdict (retried or not)."""
    path = Path(package.__file__).parent / "payout" / f"{module}.py"
    imported = [n.module or "" for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Import) for a in n.names]
    assert [m for m in imported if m == "airflow" or m.startswith("airflow.")] == []
