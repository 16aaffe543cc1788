"""The site server: connecting to the site's PostgreSQL and its schema.

The server holds ``edge_movements``: every record of every box, keyed by its global id
(``gid``, a ULID) and unique per ``(box, seq)``. It is append-only (triggers refuse UPDATE and
DELETE) and every insert statement sends ``NOTIFY edge_movements`` so that listening boxes pull at
once. The schema version is kept in ``edge_site_schema``; :data:`SERVER_MIGRATIONS` lists the steps,
run by :func:`init_schema` (``edge site init``) under an advisory lock, so two boxes running it at
once do no harm. ``edge_boxes`` lists which store file (its random install id) uses which box id
(:mod:`edge.site.sync` refuses a box id another store file uses).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg.conninfo import conninfo_to_dict

from edge.errors import UserError

if TYPE_CHECKING:
    from edge.config import SiteSettings

__all__ = ["SiteError", "SiteOffline", "SERVER_MIGRATIONS", "SERVER_SCHEMA_VERSION", "NOTIFY_CHANNEL",
           "connect", "init_schema", "schema_version", "require_schema", "read_password",
           "credential_file"]

#: The channel every insert into edge_movements notifies (payload empty).
NOTIFY_CHANNEL = "edge_movements"

#: ``SERVER_MIGRATIONS[i]`` takes the server schema from version ``i`` to ``i + 1``. Append only.
SERVER_MIGRATIONS: list[list[str]] = [
    [
        """
        CREATE TABLE edge_movements (
            gid       text PRIMARY KEY,
            box       text NOT NULL,
            seq       bigint NOT NULL CHECK (seq > 0),
            time      text NOT NULL,
            sku       text NOT NULL,
            delta     integer NOT NULL,
            utterance text NOT NULL,
            turn_id   text NOT NULL,
            undoes    text NULL REFERENCES edge_movements(gid),
            received  timestamptz NOT NULL DEFAULT now(),
            UNIQUE (box, seq)
        )
        """,
        """
        CREATE FUNCTION edge_movements_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'edge_movements is append-only: % is not allowed', TG_OP;
        END $$
        """,
        """
        CREATE TRIGGER edge_movements_no_change BEFORE UPDATE OR DELETE ON edge_movements
        FOR EACH ROW EXECUTE FUNCTION edge_movements_append_only()
        """,
        f"""
        CREATE FUNCTION edge_movements_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{NOTIFY_CHANNEL}', '');
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER edge_movements_notify AFTER INSERT ON edge_movements
        FOR EACH STATEMENT EXECUTE FUNCTION edge_movements_notify()
        """,
    ],
    # version 2: stock per place (store schema 4): a movement names its place and kind (log,
    # transfer, count, undo), a count keeps the value counted, a transfer's rows share ``op``;
    # decimal quantities for units such as m and kg. Rows of version 1 keep NULL places.
    [
        "ALTER TABLE edge_movements ALTER COLUMN delta TYPE double precision",
        "ALTER TABLE edge_movements ADD COLUMN location text NULL",
        "ALTER TABLE edge_movements ADD COLUMN kind text NOT NULL DEFAULT 'log'",
        "ALTER TABLE edge_movements ADD COLUMN counted double precision NULL",
        "ALTER TABLE edge_movements ADD COLUMN op text NULL",
    ],
    # version 3: which store file (its random install id) uses which box id, so a second box
    # configured with the same id (or a cloned SD card) is told apart and both are stopped
    [
        """
        CREATE TABLE edge_boxes (
            box        text NOT NULL,
            install    text NOT NULL,
            first_seen timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (box, install)
        )
        """,
    ],
]

#: The server schema version this code writes and expects.
SERVER_SCHEMA_VERSION = len(SERVER_MIGRATIONS)

_LOCK_KEY = 0x6564676573697465  # "edgesite": one advisory lock for schema changes


class SiteError(UserError):
    """A site operation failed for a reason the operator can fix; the message names the setting."""


class SiteOffline(SiteError):
    """The site database cannot be reached (the box keeps working from its local store)."""


def credential_file(path: Path, key: str, *, private: bool = False, what: str = "the file") -> Path:
    """The readable file ``path`` names: a relative ``path`` is looked up in ``$CREDENTIALS_DIRECTORY``
    (systemd ``LoadCredential=``) when that is set.

    ``private``: group and others must have no access (a password or a private key). Raises
    :class:`SiteError` naming the settings ``key``, the file and the fix when it is missing,
    unreadable or (``private``) open to others; ``what`` says what the file should hold.
    """
    creds = os.environ.get("CREDENTIALS_DIRECTORY")
    full = Path(creds) / path if creds and not path.is_absolute() else path
    try:
        st = full.stat()
        if not stat.S_ISREG(st.st_mode):  # a folder's mode would be blamed next, and chmod 600 would not help
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise SiteError(f"{key}: {full} is {kind}; fix: point {key} at the file inside it that holds {what} "
                            f"(mode 600, owned by the service user)" if private else
                            f"{key}: {full} is {kind}; fix: point {key} at the file that holds {what}")
        if private and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SiteError(f"{key}: {full} may be read by others (mode {stat.filemode(st.st_mode)}); "
                            f"fix: chmod 600 {full} and chown it to the service user")
        with open(full, "rb"):
            pass
    except OSError as e:
        where = f" (relative names are looked up in $CREDENTIALS_DIRECTORY={creds})" if creds else ""
        raise SiteError(f"{key}: cannot read {full}: {e.strerror or e}{where}; fix: put {what} there"
                        f"{', mode 600, owned by the service user' if private else ', readable by the service user'}"
                        ) from e
    return full


def read_password(path: Path | None, key: str = "site.password_file") -> str | None:
    """The password in ``path`` (first line, without the newline), or ``None`` without a file.

    A relative ``path`` is looked up in ``$CREDENTIALS_DIRECTORY`` (systemd ``LoadCredential=``)
    when that is set. Raises :class:`SiteError` naming the settings ``key`` if the file cannot
    be read or group or others may read or write it.
    """
    if path is None:
        return None
    full = credential_file(path, key, private=True, what="only the password")
    try:
        text = full.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SiteError(f"{key}: cannot read {full}: {e}; fix: put only the password there, mode 600") from e
    return text.splitlines()[0] if text else ""


#: libpq's TLS file parameters: (private, what the file holds).
_DSN_FILES = {"sslrootcert": (False, "the site server's CA certificate (PEM)"),
              "sslcert": (False, "this box's client certificate (PEM)"),
              "sslkey": (True, "the client certificate's private key (PEM)"),
              "sslcrl": (False, "the CA's certificate revocation list (PEM)")}


def _dsn_files(dsn: str) -> tuple[dict[str, str], dict[str, str]]:
    """(the DSN's parameters, its TLS files checked and resolved as :func:`credential_file` does)."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        raise SiteError(f"site.dsn: not a libpq connection string ({' '.join(str(e).split())}); fix: write it "
                        "as 'host=10.0.0.5 dbname=edge user=edge'") from e
    files = {}
    for name, (private, what) in _DSN_FILES.items():
        value = params.get(name)
        if value and value != "system":  # "system": libpq 16's own CA store
            files[name] = str(credential_file(Path(value), f"site.dsn {name}", private=private, what=what))
    return params, files


def _refused(reason: str, params: dict[str, str], files: dict[str, str]) -> str:
    """The operator's message for a failed connection (``reason``: libpq's words on one line)."""
    host = params.get("host") or params.get("hostaddr") or "localhost"
    at = f"the site database at host {host} port {params.get('port') or 5432}"
    mode = params.get("sslmode", "prefer")
    ca = files.get("sslrootcert", params.get("sslrootcert", "~/.postgresql/root.crt"))
    if "certificate verify failed" in reason or "self-signed certificate" in reason:
        return (f"site.dsn: {at} failed the TLS check (sslmode={mode}): its certificate is not signed by the "
                f"CA in sslrootcert={ca} ({reason}); fix: put the site server's CA certificate there, or check "
                "that host= names the site server")
    if "does not match host name" in reason:
        return (f"site.dsn: {at} failed the TLS check (sslmode={mode}): its certificate is not for host "
                f"{host} ({reason}); fix: set host= to a name the server's certificate lists")
    if "server does not support SSL" in reason:
        return (f"site.dsn: {at} does not offer TLS but sslmode={mode} requires it ({reason}); fix: set "
                "ssl = on in the server's postgresql.conf (ssl_cert_file, ssl_key_file)")
    if "no encryption" in reason:
        return (f"site.dsn: {at} refuses connections without TLS ({reason}); fix: add "
                "sslmode=verify-full sslrootcert=FILE (the site's CA certificate) to site.dsn")
    return (f"site.dsn: cannot reach {at} ({reason}); fix: check site.dsn (host, port, dbname, user), "
            "that PostgreSQL runs and accepts this box in pg_hba.conf, and site.password_file")


def connect(site: SiteSettings) -> psycopg.Connection:
    """An autocommit connection to the site database (``site.dsn`` + ``site.password_file``).

    TLS is libpq's (``sslmode=verify-full sslrootcert=FILE`` in ``site.dsn``); its files
    (``sslrootcert``, ``sslcert``, ``sslkey``, ``sslcrl``) are checked first and a relative
    name is looked up in ``$CREDENTIALS_DIRECTORY`` like the password file.

    Raises :class:`SiteOffline` naming ``site.dsn`` (its host and port; for TLS the check that
    failed) when the server cannot be reached, fails the TLS check or refuses the login within
    ``site.connect_timeout_s`` (s); :class:`SiteError` for a bad password or TLS file.
    """
    password = read_password(site.password_file)
    params, files = _dsn_files(site.dsn)
    extra = {"password": password} if password is not None else {}
    try:
        return psycopg.connect(site.dsn, autocommit=True, connect_timeout=site.connect_timeout_s,
                               application_name=f"edge-{site.box}", **files, **extra)
    except psycopg.Error as e:
        raise SiteOffline(_refused(" ".join(str(e).split()), params, files)
                          + "; the box keeps working offline meanwhile") from e


def schema_version(conn: psycopg.Connection) -> int:
    """The server's schema version; 0 for a database ``edge site init`` has not prepared."""
    row = conn.execute("SELECT to_regclass('edge_site_schema') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    got = conn.execute("SELECT version FROM edge_site_schema").fetchone()
    return int(got[0]) if got else 0


def init_schema(conn: psycopg.Connection) -> tuple[int, int]:
    """Create or migrate the server schema; returns (version before, version after).

    All missing steps run in one transaction under an advisory lock. Raises :class:`SiteError`
    if the server's schema is newer than this code's, or a step fails (nothing is changed then).
    """
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute("CREATE TABLE IF NOT EXISTS edge_site_schema (version integer NOT NULL)")
            before = schema_version(conn)
            if before > SERVER_SCHEMA_VERSION:
                raise SiteError(f"the site database has schema version {before}, newer than this program's "
                                f"{SERVER_SCHEMA_VERSION}; fix: upgrade edge on this box")
            for step in SERVER_MIGRATIONS[before:]:
                for stmt in step:
                    conn.execute(stmt)
            conn.execute("DELETE FROM edge_site_schema")
            conn.execute("INSERT INTO edge_site_schema (version) VALUES (%s)", (SERVER_SCHEMA_VERSION,))
    except psycopg.Error as e:
        raise SiteError(f"edge site init: the schema step failed ({' '.join(str(e).split())}); nothing was changed; "
                        "fix: the database user needs CREATE on the database (GRANT CREATE ON DATABASE ... TO ...)") from e
    return before, SERVER_SCHEMA_VERSION


def require_schema(conn: psycopg.Connection) -> None:
    """Raise :class:`SiteError` unless the server schema is exactly this code's version."""
    version = schema_version(conn)
    if version != SERVER_SCHEMA_VERSION:
        fix = "run 'edge site init' once" if version < SERVER_SCHEMA_VERSION else "upgrade edge on this box"
        raise SiteError(f"the site database has schema version {version}, this program needs "
                        f"{SERVER_SCHEMA_VERSION}; fix: {fix}")
