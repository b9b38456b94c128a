//! Plain-text tables in kubectl's style (upper-case headers, columns three spaces apart), with
//! colour only where the caller says a terminal shows it.

use unicode_width::UnicodeWidthStr;

/// Whether to colour output: only on a terminal, and never when `NO_COLOR` is set
/// (<https://no-color.org>).
pub fn colour_enabled(on_terminal: bool, no_color_set: bool) -> bool {
    on_terminal && !no_color_set
}

/// ANSI styling that is a no-op when colour is off.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub colour: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn good(self, text: &str) -> String {
        self.paint("32", text)
    }
    pub fn bad(self, text: &str) -> String {
        self.paint("31", text)
    }
}

/// How many terminal columns `text` takes: East Asian wide characters and emoji take two,
/// combining marks none, and colour escapes (`\x1b[…m`) nothing.
pub fn display_width(text: &str) -> usize {
    let mut width = 0;
    let mut rest = text;
    while let Some(at) = rest.find('\x1b') {
        width += UnicodeWidthStr::width(&rest[..at]);
        let escape = &rest[at..];
        rest = escape.find('m').map_or("", |end| &escape[end + 1..]);
    }
    width + UnicodeWidthStr::width(rest)
}

/// Lays out `rows` under `headers`, each column as wide as its widest cell (measured in
/// terminal columns, so payees in any script line up); trailing spaces are trimmed.
pub fn render(headers: &[&str], rows: &[Vec<String>], style: Style) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| display_width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(display_width(cell));
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                out.push_str("   ");
            }
            out.push_str(cell);
            out.extend(std::iter::repeat_n(' ', w - display_width(cell)));
        }
        out.trim_end().to_owned()
    };
    let mut out = style.bold(&line(headers.to_vec()));
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Style = Style { colour: false };

    #[test]
    fn aligns_columns_by_characters() {
        let rows = vec![
            vec!["a".to_owned(), "\"CAFÉ\"".to_owned(), "1".to_owned()],
            vec!["long-name".to_owned(), "x".to_owned(), "".to_owned()],
        ];
        let text = render(&["NAME", "PAYEE", "N"], &rows, PLAIN);
        assert_eq!(
            text,
            "NAME        PAYEE    N\na           \"CAFÉ\"   1\nlong-name   x\n"
        );
    }

    #[test]
    fn aligns_wide_and_combining_characters_and_colour_by_display_width() {
        let rows = vec![
            vec!["東京ラーメン".to_owned(), "1".to_owned()],
            vec!["Cafe\u{301}".to_owned(), "2".to_owned()],
            vec![Style { colour: true }.good("ok"), "3".to_owned()],
        ];
        let text = render(&["PAYEE", "N"], &rows, PLAIN);
        assert_eq!(
            text,
            "PAYEE          N\n東京ラーメン   1\nCafe\u{301}           2\n\x1b[32mok\x1b[0m             3\n"
        );
        assert_eq!(display_width("東京"), 4);
        assert_eq!(display_width("\x1b[1mNAME\x1b[0m"), 4);
    }

    #[test]
    fn colours_only_when_asked() {
        let text = render(&["NAME"], &[], Style { colour: true });
        assert_eq!(text, "\x1b[1mNAME\x1b[0m\n");
        assert_eq!(Style { colour: false }.good("ok"), "ok");
        assert_eq!(Style { colour: true }.bad("no"), "\x1b[31mno\x1b[0m");
    }

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        let cases = [
            (true, false, true),
            (true, true, false),
            (false, false, false),
            (false, true, false),
        ];
        for (terminal, no_color, want) in cases {
            assert_eq!(
                colour_enabled(terminal, no_color),
                want,
                "{terminal} {no_color}"
            );
        }
    }
}
