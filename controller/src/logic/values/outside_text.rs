//! What of an answer from outside (YNAB, or whatever `spec.apiUrl` reaches) may be repeated in a
//! status, an Event or an error message: a short summary, never the body.

/// The most characters of outside text that go into one message.
pub const MAX_CHARS: usize = 120;

/// A refused request in a few words: the HTTP status, and YNAB's error id and name when the body
/// was a spec-conforming error for that status (`HTTP 404, YNAB error 404.2
/// resource_not_found`). YNAB's free-text `detail`, or any other body, is never repeated.
pub fn refusal(status: u16, error: Option<(&str, &str)>) -> String {
    match error {
        Some((id, name)) if is_error_id(status, id) && is_error_name(name) => {
            format!("HTTP {status}, YNAB error {id} {name}")
        }
        _ => format!("HTTP {status}"),
    }
}

/// YNAB's ids are the status, optionally with a short numeric suffix: `404`, `403.1`, `404.2`.
fn is_error_id(status: u16, id: &str) -> bool {
    let code = status.to_string();
    match id.strip_prefix(code.as_str()) {
        Some("") => true,
        Some(rest) => rest.strip_prefix('.').is_some_and(|suffix| {
            (1..=3).contains(&suffix.len()) && suffix.bytes().all(|b| b.is_ascii_digit())
        }),
        None => false,
    }
}

/// YNAB's names are short snake_case words: `resource_not_found`, `subscription_lapsed`.
fn is_error_name(name: &str) -> bool {
    (1..=48).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// `text` without control or invisible formatting characters (line breaks, ANSI escapes,
/// bidirectional overrides, zero-width characters), cut to `max` characters with `…`.
pub fn sanitize(text: &str, max: usize) -> String {
    let clean: Vec<char> = text.chars().filter(|c| !is_hidden(*c)).collect();
    if clean.len() <= max {
        return clean.into_iter().collect();
    }
    let mut cut: String = clean[..max.saturating_sub(1)].iter().collect();
    cut.push('…');
    cut
}

fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

#[cfg(test)]
#[path = "outside_text_tests.rs"]
mod tests;
