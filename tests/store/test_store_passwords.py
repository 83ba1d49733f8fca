"""A store URL's password never shows: not given as ``?password=``, not with an @ left unencoded in it,
and hiding it leaves the database's messages as they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from robojudge.report import write_html_report
from robojudge.store import ResultRow, ResultStore, StoreError, display_url, mask_text, parse_url

SECRET = "S3cr3t@p:ss/w#rd%x"
ENCODED = "S3cr3t%40p%3Ass%2Fw%23rd%25x"


def _shows_none_of(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text, f"{secret!r} shown in {text!r}"


def test_query_password_settings_are_masked() -> None:
    url = parse_url(f"postgresql://rj@127.0.0.1:5432/db?password={ENCODED}&sslpassword=k3y&sslmode=require")
    shown = display_url(url)
    # Before, display_url and mask_text hid only the password written before the @.
    _shows_none_of(shown, ENCODED, SECRET, "k3y")
    assert shown == "postgresql+psycopg://rj@127.0.0.1:5432/db?password=***&sslmode=require&sslpassword=***"
    text = f"cannot open postgresql://rj@h/db?password={ENCODED}&sslmode=require: refused"
    assert mask_text(text) == "cannot open postgresql://rj@h/db?password=***&sslmode=require: refused"
    assert mask_text("host=h password='a b' dbname=x") == "host=h password=*** dbname=x"


def test_a_query_password_does_not_show_in_errors() -> None:
    with pytest.raises(StoreError, match="cannot open") as info:
        ResultStore(f"postgresql://rj@127.0.0.1:1/db?connect_timeout=5&password={ENCODED}")
    _shows_none_of(str(info.value), ENCODED, SECRET)


@pytest.mark.parametrize(("password", "rest"), [("p@s5word", "s5word"), ("ab@cd:ef", "cd:ef"),
                                                (SECRET, "p:ss/w#rd%x"),
                                                # a / or ? after the @ (audit pgstore 1): the rest was
                                                # taken for the host and the database, and looked up
                                                ("p@ss/word", "ss/word"), ("p@ss?word", "ss?word"),
                                                ("Xy@9/Qz+w=", "9/Qz+w=")])
def test_an_unencoded_at_in_the_password_is_refused_unshown(password: str, rest: str) -> None:
    text = f"postgresql://rj:{password}@127.0.0.1:1/rjflow"
    # Before, masking stopped at the first @ and showed the rest, which make_url took for the host (or a
    # port it could not read, quoted in the error); nothing said to write @ as %40.
    masked = "postgresql://rj:***@127.0.0.1:1/rjflow"
    assert mask_text(f"cannot open {text}: refused") == f"cannot open {masked}: refused"
    with pytest.raises(StoreError, match="%40") as info:
        parse_url(text)
    assert "password" in str(info.value)
    _shows_none_of(str(info.value), password, rest)
    assert masked in str(info.value)


def test_a_user_name_holding_an_at_is_kept_and_its_password_masked() -> None:
    text = "postgresql://me@corp:s5word@127.0.0.1:1/db"
    url = parse_url(text)
    assert (url.username, url.password, url.host) == ("me@corp", "s5word", "127.0.0.1")
    assert mask_text(text) == "postgresql://me@corp:***@127.0.0.1:1/db"
    assert display_url(url) == "postgresql+psycopg://me%40corp:***@127.0.0.1:1/db"


def test_a_password_that_is_a_word_of_the_message_leaves_the_message_whole() -> None:
    with pytest.raises(StoreError) as info:
        ResultStore("postgresql+psycopg://robo:connection@127.0.0.1:1/results?connect_timeout=5")
    # Before, every "connection" of the driver's message read "***", which gave the password away.
    assert "results?connect_timeout=5: connection failed: connection to server at" in str(info.value)


@pytest.mark.postgres
def test_a_query_password_is_masked_in_the_store_and_its_report(postgres_db_url: str, tmp_path: Path) -> None:
    url = make_url(postgres_db_url).update_query_dict({"password": SECRET})  # trust auth ignores it
    given = url.render_as_string(hide_password=False)
    assert ENCODED in given
    with ResultStore(given) as store:
        store.add([ResultRow("a", "m", "c", "1", "ok", 1.0)])
        _shows_none_of(store.url + repr(store), ENCODED, SECRET)
        assert "password=***" in store.url
    page = Path(write_html_report(given, tmp_path / "report").index).read_text()
    assert "password=***" in page
    _shows_none_of(page, ENCODED, SECRET)


@pytest.mark.postgres
def test_a_password_that_is_a_word_of_the_servers_message_leaves_it_whole(postgres_url: str) -> None:
    url = make_url(postgres_url).set(database="rj_no_such_db", password="database")
    with pytest.raises(StoreError) as info:
        ResultStore(url.render_as_string(hide_password=False))
    # Before: 'FATAL:  *** "rj_no_such_db" does not exist'.
    assert 'database "rj_no_such_db" does not exist' in str(info.value)


@pytest.mark.parametrize("url", ["postgresql://u:pw@127.0.0.1/team@db",
                                 "postgresql://u:pw@127.0.0.1/db?application_name=me@corp"])
def test_an_at_after_the_host_is_not_blamed_on_the_password_alone(url: str) -> None:
    with pytest.raises(StoreError) as info:
        parse_url(url)
    # the @ here is in the database name or the query: the message names all three places and %40
    assert "the password, the database name or the query; write each @ there as %40" in str(info.value)
