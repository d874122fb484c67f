"""The storage seam holds: indexing and the library API reach storage only through the
interface (`store.base`), and the API picks the backend with `store.open_store`."""

from __future__ import annotations

from test_architecture import openmemd_imports, package_modules


def store_imports(package: str) -> dict[str, set[str]]:
    """Each module of `package` with the `store` modules it imports."""
    return {module: {t for t in openmemd_imports(path) if t.split(".")[0] == "store"}
            for module, path in package_modules().items()
            if module.split(".")[0] == package}


def test_index_uses_only_the_store_interface() -> None:
    allowed = ("store.base", "store.derived")
    wrong = {m: sorted(t for t in targets if not t.startswith(allowed))
             for m, targets in store_imports("index").items()}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_api_uses_only_open_store_and_the_interface() -> None:
    wrong = {m: sorted(t for t in targets
                       if t not in ("store", "store.open_store", "store.warm_in_background")
                       and not t.startswith("store.base"))
             for m, targets in store_imports("api").items()}
    assert {m: t for m, t in wrong.items() if t} == {}
