//! Unit tests of `logic/values/payee.rs`.

use super::*;

#[test]
fn bank_noise_is_removed() {
    for (raw, expected) in [
        ("SQ *BLUE BOTTLE COFFEE 0423", "BLUE BOTTLE"),
        ("PAYPAL *SPOTIFY", "SPOTIFY"),
        ("Card Purchase Rema 1000 Oslo", "REMA OSLO"),
        ("REMA 1000", "REMA"),
        ("rema", "REMA"),
        ("AMAZON MKTPL*2K4L19", "AMAZON MKTPL"),
        ("  Shell #12345  ", "SHELL"),
        ("CARTE 12/07 MONOPRIX PARIS 11", "MONOPRIX PARIS"),
        (
            "CB BOULANGERIE DU PORT FACT 120726 525130******1",
            "BOULANGERIE DU",
        ),
        ("1234", ""),
    ] {
        assert_eq!(normalise_payee(raw), expected, "{raw}");
    }
}

#[test]
fn plain_words_keep_letters_and_digits_in_capitals() {
    for (raw, expected) in [
        ("  Trader-Joe's #552 ", "TRADER JOE S 552"),
        ("café  été", "CAFÉ ÉTÉ"),
        (" - ", ""),
        ("", ""),
    ] {
        assert_eq!(plain_words(raw), expected, "{raw}");
    }
}
