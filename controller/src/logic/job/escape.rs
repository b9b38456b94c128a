//! Untrusted text (command lines, object names, payee names, error messages) echoed into the
//! bot's Markdown comments and pull requests. Escaped so that it stays text: no HTML (and so no
//! fake hidden marker), no link or image, no Markdown structure, no @mention or #reference that
//! would notify someone.
//!
//! Gitea finds mentions and references in text nodes after Markdown rendering, so a Markdown
//! backslash escape does not stop them; a zero-width space after `@`, `#` and `!` does, and is
//! invisible. Bare URLs are autolinked the same way, so `://` gets one too.

/// Zero-width space: breaks mentions, references and autolinks without changing what is seen.
const ZWSP: char = '\u{200B}';

/// Characters Markdown gives a meaning to; each is written with a backslash.
const MARKDOWN: &[char] = &[
    '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '.', '!', '|', '~', ':',
];

/// The text as one Markdown-inert line: line breaks become spaces, Markdown punctuation is
/// backslash-escaped, `<`, `>` and `&` become entities.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => {
                out.push('@');
                out.push(ZWSP);
            }
            c if MARKDOWN.contains(&c) => {
                out.push('\\');
                out.push(c);
                if matches!(c, '#' | '!') || (c == ':' && chars.peek() == Some(&'/')) {
                    out.push(ZWSP);
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The text as an inline code span on one line: nothing inside is Markdown or HTML; backticks
/// (which would end the span) become `'`; `@` gets the zero-width space (mention notifications
/// are computed from the raw text by some Gitea versions).
pub fn code(s: &str) -> String {
    let inner: String = s
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .flat_map(|c| match c {
            '`' => vec!['\''],
            '\n' | '\r' | '\t' => vec![' '],
            '@' => vec!['@', ZWSP],
            c => vec![c],
        })
        .collect();
    if inner.trim().is_empty() {
        return "` `".into();
    }
    format!("`{inner}`")
}

/// Multi-line text as a fenced code block whose fence is longer than any backtick run inside,
/// so the text cannot close it.
pub fn block(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body: String = s
        .chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .flat_map(|c| match c {
            '@' => vec!['@', ZWSP],
            c => vec![c],
        })
        .collect();
    format!("{fence}text\n{}\n{fence}", body.trim_end())
}

/// A Gitea login shown as an @mention, only if it is a plain login; anything else is escaped
/// text (a job's author can come from a forged object).
pub fn mention(login: &str) -> String {
    let plain = !login.is_empty()
        && login.len() <= 255
        && login
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        format!("@{login}")
    } else {
        text(login)
    }
}

#[cfg(test)]
#[path = "escape_tests.rs"]
mod tests;
