//! YAML written for people to read and for the API server to take: the CRDs and policies, a plan
//! or a rule proposed in a pull request, the plugin's `-o yaml`. A long line stays one line (a
//! pattern or a CEL rule folded at 80 columns is harder to read and to diff); text with line
//! breaks is written as a literal block.

use serde::Serialize;
use serde_saphyr::{SerializeError, SerializerOptions};

/// `value` as one YAML document.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, SerializeError> {
    let mut options = SerializerOptions::default();
    options.folded_wrap_chars = usize::MAX;
    serde_saphyr::to_string_with_options(value, options)
}

#[cfg(test)]
#[path = "yaml_text_tests.rs"]
mod tests;
