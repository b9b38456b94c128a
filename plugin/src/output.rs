//! Where results go: kubectl-style text on stdout for `-o table`, one JSON or YAML document for
//! `-o json|yaml`, `<resource>.ledgerops.dev/<name>` lines for `-o name`.

use std::io::{IsTerminal, Write};

use ledgerops::logic::values::yaml_text;
use serde::Serialize;

use crate::cli::Format;
use crate::error::PluginError;
use crate::logic::table::{Style, colour_enabled};

pub struct Printer {
    format: Format,
    pub style: Style,
}

impl Printer {
    pub fn new(format: Format) -> Self {
        let on_terminal = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            format,
            style: Style {
                colour: format == Format::Table && colour_enabled(on_terminal, no_color),
            },
        }
    }

    /// Prints `text` now, in table mode only.
    pub fn text(&self, text: &str) {
        if self.format == Format::Table {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// Prints `value` as the command's one document, in json or yaml mode only.
    pub fn value<T: Serialize>(&self, value: &T) -> Result<(), PluginError> {
        let text = match self.format {
            Format::Table | Format::Name => return Ok(()),
            Format::Json => serde_json::to_string_pretty(value)
                .map(|t| t + "\n")
                .map_err(|e| PluginError::Output(e.to_string()))?,
            Format::Yaml => {
                yaml_text::to_string(value).map_err(|e| PluginError::Output(e.to_string()))?
            }
        };
        print!("{text}");
        Ok(())
    }

    /// Prints one line per object of `kind` named in `names`, in name mode only.
    pub fn names<'a>(&self, kind: &str, names: impl IntoIterator<Item = &'a str>) {
        if self.format == Format::Name {
            let mut out = std::io::stdout().lock();
            for name in names {
                let _ = writeln!(out, "{}", object_name(kind, name));
            }
            let _ = out.flush();
        }
    }
}

/// `approvalrequest.ledgerops.dev/september-1` for an ApprovalRequest `september-1`: what
/// `kubectl get -o name` prints, and what `kubectl get` takes back.
pub fn object_name(kind: &str, name: &str) -> String {
    format!(
        "{}.{}/{name}",
        kind.to_lowercase(),
        ledgerops::api::common::GROUP
    )
}

/// Whether a person can be asked: standard input and output are both a terminal.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Asks `question` on the terminal and returns the answer line.
pub fn ask(question: &str) -> Result<String, PluginError> {
    print!("{question}");
    std::io::stdout()
        .flush()
        .map_err(|e| PluginError::Output(e.to_string()))?;
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| PluginError::Output(e.to_string()))?;
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::object_name;

    #[test]
    fn names_read_as_kubectl_get_prints_them() {
        assert_eq!(
            object_name("ApprovalRequest", "september-1"),
            "approvalrequest.ledgerops.dev/september-1"
        );
        assert_eq!(
            object_name("CategorizationPlan", "undo-september"),
            "categorizationplan.ledgerops.dev/undo-september"
        );
    }
}
