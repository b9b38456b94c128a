//! The merchant behind a payee's text: banks add noise (card prefixes, store numbers,
//! references) to the same merchant, so history and rules compare payees normalised.

/// Prefixes that card processors and banks put before the merchant.
const NOISE_PREFIXES: &[&str] = &[
    "SQ *",
    "SQ*",
    "PAYPAL *",
    "PAYPAL*",
    "PP*",
    "SUMUP *",
    "SUMUP*",
    "ZETTLE_*",
    "IZ *",
    "CARD PURCHASE ",
    "CARTE ",
    "CB ",
    "POS ",
    "DEBIT ",
    "VISA ",
    "CONTACTLESS ",
    "PURCHASE ",
];

/// The merchant behind a bank's payee text: upper case, without processor prefixes, store
/// numbers, references, punctuation and location tails; at most two words.
pub fn normalise_payee(raw: &str) -> String {
    let mut s = raw.trim().to_uppercase();
    loop {
        let before = s.len();
        for p in NOISE_PREFIXES {
            if let Some(rest) = s.strip_prefix(p) {
                s = rest.trim_start().to_owned();
            }
        }
        if s.len() == before {
            break;
        }
    }
    let plain = plain_words(&s);
    let words: Vec<&str> = plain
        .split_whitespace()
        .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .take(2)
        .collect();
    words.join(" ")
}

/// `raw` in upper case with everything but letters and digits made a space, one space between
/// words: the alphabet normalised payees (and rule patterns on them) are written in.
pub fn plain_words(raw: &str) -> String {
    let cleaned: String = raw
        .to_uppercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "payee_tests.rs"]
mod tests;
