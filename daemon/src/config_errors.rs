//! A configuration file's mistakes in its own words: the setting as the file
//! names it (`store.synchronous`, not the type that reads it), what the file
//! has there, and what is allowed, with the line and column.

use ron::error::{Error, Position, SpannedError};

/// Where each of the types that read a configuration is in the file, as an
/// operator would name it.
fn section_of(type_name: &str) -> &'static str {
    match type_name {
        "PartialStore" | "StoreConfig" => "store",
        "PartialPasswords" | "Passwords" => "passwords",
        "PartialMetrics" | "MetricsConfig" => "metrics",
        "RateLimit" => "rate_limit",
        "Hints" => "hints",
        "Synchronous" => "store.synchronous",
        "DescriptorTables" => "descriptor_tables",
        _ => "",
    }
}

/// `setting` inside `section` (or alone at the top).
fn qualified(section: &str, setting: &str) -> String {
    match section {
        "" => setting.to_string(),
        section => format!("{section}.{setting}"),
    }
}

/// `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The setting whose value starts at `at`: the last `name:` before it.
fn setting_before(text: &str, at: Position) -> Option<String> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(at.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = line_start
        + text
            .get(line_start..)?
            .chars()
            .take(at.col.saturating_sub(1))
            .map(char::len_utf8)
            .sum::<usize>();
    let before = text.get(..offset)?;
    let colon = before.rfind(':')?;
    let name: String = before
        .get(..colon)?
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let name: String = name.chars().rev().collect();
    (!name.is_empty()).then_some(name)
}

/// What a kind of value is called, for "expected ...".
fn kind_expected(error: &Error) -> Option<&'static str> {
    Some(match error {
        Error::ExpectedInteger | Error::IntegerOutOfBounds | Error::InvalidIntegerDigit { .. } => {
            "a whole number (0 or more)"
        }
        Error::ExpectedString | Error::ExpectedStringEnd => "a quoted string",
        Error::ExpectedBoolean => "true or false",
        Error::ExpectedFloat => "a number",
        Error::ExpectedStructLike | Error::ExpectedNamedStructLike(_) => {
            "a group of settings in parentheses"
        }
        _ => return None,
    })
}

/// The message for a file `text` that failed to parse with `error`.
pub fn explain(text: &str, error: &SpannedError) -> String {
    let at = format!("{}:{}", error.span.start.line, error.span.start.col);
    let message = match &error.code {
        Error::NoSuchStructField {
            expected,
            found,
            outer,
        } => {
            let section = section_of(outer.as_deref().unwrap_or_default());
            let setting = qualified(section, found);
            format!(
                "`{setting}` is not a setting; there are {}",
                one_of(expected)
            )
        }
        Error::NoSuchEnumVariant {
            expected,
            found,
            outer,
        } => {
            let setting = section_of(outer.as_deref().unwrap_or_default());
            format!("{setting}: `{found}` is not one of {}", one_of(expected))
        }
        Error::MissingStructField { field, outer } => {
            let section = section_of(outer.as_deref().unwrap_or_default());
            format!("{section} needs {field} too (a group is given whole)")
        }
        Error::DuplicateStructField { field, outer } => {
            let section = section_of(outer.as_deref().unwrap_or_default());
            format!("`{}` is given twice", qualified(section, field))
        }
        code => match (kind_expected(code), setting_before(text, error.span.start)) {
            (Some(kind), Some(setting)) => format!("{setting}: expected {kind}"),
            _ => code.to_string(),
        },
    };
    format!("{at}: {message}")
}

/// Whether `text` holds nothing but white space and comments: an empty file
/// means every default.
pub fn is_blank(text: &str) -> bool {
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if let Some(after) = rest.strip_prefix("/*") {
            let Some((_, next)) = after.split_once("*/") else {
                return false;
            };
            rest = next;
        } else {
            return false;
        }
        rest = rest.trim_start();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_comments_only_is_blank() {
        assert!(is_blank(""));
        assert!(is_blank("  \n// nothing here\n/* nor\n here */\n"));
        assert!(!is_blank("// a comment\n(grace_secs: 5)"));
        assert!(!is_blank("/* never closed"));
    }
}
