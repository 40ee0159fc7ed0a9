"""The signer keeps its key to itself and checks every signature before it is used."""

from __future__ import annotations

import hashlib
import pickle

import pytest
from tronpy.keys import PrivateKey

from airflow_provider_tronenergy.signer import (
    LocalKeySigner,
    SignerError,
    load_signer,
    recovered_address,
    signature_for,
)

KEY = PrivateKey(hashlib.sha256(b"signer tests").digest())
TXID = hashlib.sha256(b"a transaction").digest()


def test_local_signer_signs_for_its_address():
    signer = LocalKeySigner(KEY.hex())
    assert signer.address == KEY.public_key.to_base58check_address()
    signature = signature_for(signer, TXID)
    assert len(signature) == 65
    assert recovered_address(TXID, signature) == signer.address


def test_a_0x_prefix_and_blanks_are_accepted():
    assert LocalKeySigner(f"  0x{KEY.hex()}\n").address == LocalKeySigner(KEY.hex()).address


def test_the_key_never_shows_in_repr_str_or_pickle():
    signer = LocalKeySigner(KEY.hex())
    for text in (repr(signer), str(signer), f"{signer}"):
        assert KEY.hex() not in text and signer.address in text
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(signer)


@pytest.mark.parametrize("bad", ["", "12", "zz" * 32, "00" * 32, "ff" * 32, KEY.hex() + "00"])
def test_a_bad_key_is_refused_without_repeating_it(bad):
    with pytest.raises(SignerError) as info:
        LocalKeySigner(bad)
    if bad:
        assert bad not in str(info.value)


def test_an_external_signer_is_loaded_by_import_path():
    signer = load_signer("support.signers:KmsLikeSigner", {"passphrase": "hsm"})
    assert signature_for(signer, TXID)
    dotted = load_signer("support.signers.KmsLikeSigner", {"passphrase": "hsm"})
    assert dotted.address == signer.address


@pytest.mark.parametrize("path, kwargs, message", [
    ("not a path", {}, "import path"),
    ("support.signers:Missing", {}, "cannot be imported"),
    ("no_such_module_x:Signer", {}, "cannot be imported"),
    ("support.signers:KmsLikeSigner", {"wrong": 1}, "could not be built"),
    ("collections:OrderedDict", {}, "no address and sign"),
    ("support.signers:LyingSigner", {"passphrase": "x", "claimed": "Tnope"}, "not a valid"),
])
def test_an_unusable_external_signer_is_refused(path, kwargs, message):
    with pytest.raises(SignerError, match=message):
        load_signer(path, kwargs)


def test_a_signature_of_another_key_is_refused():
    honest = load_signer("support.signers:KmsLikeSigner", {"passphrase": "other"})
    liar = load_signer("support.signers:LyingSigner",
                       {"passphrase": "hsm", "claimed": honest.address})
    with pytest.raises(SignerError, match="another key"):
        signature_for(liar, TXID)


def test_a_short_signature_is_refused():
    short = load_signer("support.signers:ShortSigner", {"passphrase": "hsm"})
    with pytest.raises(SignerError, match="65-byte"):
        signature_for(short, TXID)
