"""A database `storage` (Optuna's RDBStorage through SQLAlchemy): checking that its URL names a dialect
and a driver this Python has, and opening it when schedulers on several machines start at once.

The runner does not need a database driver unless a sweep names a database, so a missing one is
bad input of the `storage` field, named with the package and the pip line, not Optuna's "Please
install appropriate one" from deep inside the scheduler.
"""

from __future__ import annotations

import random
import shlex
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from optuna.storages import RDBStorage

# A driver's import name -> what pip installs it as (binary wheels where the driver has them).
PACKAGES = {
    "psycopg": "psycopg[binary]",
    "psycopg2": "psycopg2-binary",
    "pg8000": "pg8000",
    "asyncpg": "asyncpg",
    "pymysql": "PyMySQL",
    "MySQLdb": "mysqlclient",
    "mysql": "mysql-connector-python",
    "mariadb": "mariadb",
    "oracledb": "oracledb",
    "cx_Oracle": "oracledb",
    "pyodbc": "pyodbc",
    "pymssql": "pymssql",
}
EXAMPLE = "postgresql+psycopg://user:password@db-host:5432/optuna"
OPEN_TRIES = 5


def driver_problem(url: str) -> tuple[str, str] | None:
    """(message, fix) when SQLAlchemy cannot use URL here: unreadable, an unknown dialect or driver, or
    a driver that is not installed in this Python; None when it can (nothing is connected to)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        u = make_url(url)
    except ArgumentError:
        return (
            "is not a database URL SQLAlchemy can read",
            f"write it as dialect+driver://user@host/database, e.g. {EXAMPLE}",
        )
    try:
        dialect = u.get_dialect()
    except NoSuchModuleError:
        return (
            f"SQLAlchemy has no dialect or driver {u.drivername!r}",
            f"name a dialect and driver SQLAlchemy knows, e.g. {EXAMPLE}",
        )
    try:
        dialect.import_dbapi()
    except ImportError as e:
        module = (getattr(e, "name", None) or str(e)).split(".")[0]
        package = PACKAGES.get(module, module)
        pip = f"{shlex.quote(sys.executable)} -m pip install {shlex.quote(package)}"
        return (
            f"the {u.drivername} driver needs the Python package {package} (module {module}), "
            f"which is not installed in {sys.executable}",
            f"install it on this machine: {pip}; or name an installed driver in the URL (e.g. postgresql+psycopg://)",
        )
    return None


def open_storage(url: str) -> RDBStorage:
    """RDBStorage(url), tried again when another scheduler is creating Optuna's tables in the same
    empty database at the same moment: PostgreSQL's CREATE TABLE/TYPE are not safe against a
    concurrent one (the loser gets a unique violation on pg_type or 'relation already exists'); once
    the winner commits, the tables are there and a new try only checks them."""
    from optuna.storages import RDBStorage
    from sqlalchemy.exc import IntegrityError, ProgrammingError

    for attempt in range(OPEN_TRIES):
        try:
            return RDBStorage(url)
        except (IntegrityError, ProgrammingError):
            if attempt == OPEN_TRIES - 1:
                raise
            time.sleep(0.1 + random.random() * 0.4)  # apart from the other scheduler's next try
    raise AssertionError("unreachable")
