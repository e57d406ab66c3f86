//! `--engine "CMD ARGS"` split into the program and its arguments the way a
//! POSIX shell splits words, and nothing more: no shell runs it, so there are
//! no variables, globs, pipes or redirections. Spaces separate words; single
//! quotes keep everything up to the next one; double quotes keep everything
//! but `\"` and `\\`; a backslash outside quotes keeps the character after
//! it.

/// The words of `text`; an error for an empty command or an open quote.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let quoted = until(&mut chars, '\'', false).ok_or("an unclosed ' in --engine")?;
                word.get_or_insert_default().push_str(&quoted);
            }
            '"' => {
                let quoted = until(&mut chars, '"', true).ok_or("an unclosed \" in --engine")?;
                word.get_or_insert_default().push_str(&quoted);
            }
            '\\' => word.get_or_insert_default().extend(chars.next()),
            c => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    if words.is_empty() {
        return Err("--engine names no program".to_string());
    }
    Ok(words)
}

/// The text up to `close`, which is consumed; with `escapes`, `\` before
/// `close` or `\` keeps that character. `None` when `close` never comes.
fn until(chars: &mut std::str::Chars<'_>, close: char, escapes: bool) -> Option<String> {
    let mut text = String::new();
    loop {
        match chars.next()? {
            c if c == close => return Some(text),
            '\\' if escapes => match chars.next()? {
                c if c == close || c == '\\' => text.push(c),
                c => {
                    text.push('\\');
                    text.push(c);
                }
            },
            c => text.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_split_as_a_shell_splits_them() {
        assert_eq!(split("edax -gtp").unwrap(), ["edax", "-gtp"]);
        assert_eq!(split("  a   b ").unwrap(), ["a", "b"]);
        assert_eq!(
            split("sh -c 'read a; exit 3'").unwrap(),
            ["sh", "-c", "read a; exit 3"]
        );
        assert_eq!(
            split(r#""/opt/my engine/bin" --x="a \"b\"" c\ d"#).unwrap(),
            ["/opt/my engine/bin", "--x=a \"b\"", "c d"]
        );
        assert_eq!(split("''").unwrap(), [""]);
        assert!(split("   ").unwrap_err().contains("no program"));
        assert!(split("edax 'open").unwrap_err().contains("unclosed"));
    }

    proptest! {
        #[test]
        fn any_text_splits_without_panicking(text in ".*") {
            let _ = split(&text);
        }

        #[test]
        fn quoted_words_come_back(words in proptest::collection::vec("[^']{0,12}", 1..5)) {
            let text: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            prop_assert_eq!(split(&text.join(" ")).unwrap(), words);
        }
    }
}
