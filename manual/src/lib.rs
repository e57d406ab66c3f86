//! The manual pages of `flip` and `flipd`, each one page whole: the title,
//! synopsis, description and options from the flags' definitions (clap and
//! clap_mangen), then every subcommand with its own options on the same
//! page, then the sections only prose can give (the commands typed at
//! flip's prompt, the environment, the files, the exit statuses). No page
//! names another page that is not installed.

use std::io::Write;

/// A section of prose after the options: a title, paragraphs, then terms
/// each with what it means.
pub struct Section {
    /// The heading, in capitals by custom (`ENVIRONMENT`).
    pub title: &'static str,
    /// Paragraphs before the terms.
    pub paragraphs: Vec<String>,
    /// Terms (a variable, a file, a status) and what each means.
    pub terms: Vec<(String, String)>,
}

impl Section {
    /// A section of terms alone.
    pub fn terms(title: &'static str, terms: Vec<(String, String)>) -> Section {
        Section {
            title,
            paragraphs: Vec::new(),
            terms,
        }
    }

    /// A section of terms alone, from a table of them.
    pub fn table(title: &'static str, terms: &[(&str, &str)]) -> Section {
        let owned = (terms.iter())
            .map(|(term, meaning)| (term.to_string(), meaning.to_string()))
            .collect();
        Section::terms(title, owned)
    }
}

/// The whole page of `command`, with `sections` after its subcommands.
pub fn page(command: clap::Command, sections: &[Section]) -> std::io::Result<Vec<u8>> {
    let mut command = command;
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    write_subcommands(&command, &mut out)?;
    for section in sections {
        write_section(section, &mut out)?;
    }
    man.render_version_section(&mut out)?;
    Ok(one_preamble(&out))
}

/// What clap_mangen writes before each part it renders (the apostrophe's
/// definition): kept once, at the top.
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

fn one_preamble(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let body = text.replace(PREAMBLE, "");
    format!("{PREAMBLE}{body}").into_bytes()
}

/// Every subcommand but `help`, with its usage, what it does and its
/// arguments, as subsections of one section.
fn write_subcommands(command: &clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let subcommands: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    if subcommands.is_empty() {
        return Ok(());
    }
    writeln!(out, ".SH SUBCOMMANDS")?;
    for sub in subcommands {
        let arguments: Vec<&clap::Arg> = sub.get_arguments().filter(|a| shown(a)).collect();
        let usage: Vec<String> = arguments.iter().map(|a| usage_word(a)).collect();
        let head = format!(
            "{} {} {}",
            command.get_name(),
            sub.get_name(),
            usage.join(" ")
        );
        writeln!(
            out,
            ".SS \"{}\"",
            escape(head.trim_end()).replace('"', "\\(dq")
        )?;
        let about = sub.get_long_about().or(sub.get_about());
        if let Some(about) = about {
            writeln!(out, "{}", paragraphs(&about.to_string()))?;
        }
        for arg in arguments {
            writeln!(out, ".TP\n{}", arg_term(arg))?;
            let help = arg.get_long_help().or(arg.get_help());
            let mut text = help.map(ToString::to_string).unwrap_or_default();
            let values: Vec<String> = (arg.get_possible_values().iter())
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if takes_value(arg) && !values.is_empty() {
                text.push_str(&format!(" (one of: {})", values.join(", ")));
            }
            writeln!(out, "{}", escape(text.trim_start()))?;
        }
    }
    Ok(())
}

/// Whether an argument is worth a line: not hidden, not clap's own
/// `--help` and `--version`.
fn shown(arg: &clap::Arg) -> bool {
    let own = matches!(arg.get_id().as_str(), "help" | "version");
    !arg.is_hide_set() && !own
}

/// An argument as the usage line shows it: `[--level <LEVEL>]`, `<FILE>`.
fn usage_word(arg: &clap::Arg) -> String {
    let word = match arg.get_long() {
        Some(long) => format!("--{long}"),
        None => value_name(arg),
    };
    let word = match (arg.get_long(), takes_value(arg)) {
        (Some(_), true) => format!("{word} {}", value_name(arg)),
        _ => word,
    };
    if arg.is_required_set() {
        word
    } else {
        format!("[{word}]")
    }
}

/// An argument as its term is written: bold flags, the value in italics.
fn arg_term(arg: &clap::Arg) -> String {
    let mut flags = Vec::new();
    if let Some(short) = arg.get_short() {
        flags.push(format!("\\fB\\-{short}\\fR"));
    }
    if let Some(long) = arg.get_long() {
        flags.push(format!("\\fB\\-\\-{}\\fR", escape(long)));
    }
    let mut term = flags.join(", ");
    if term.is_empty() || takes_value(arg) {
        let value = format!("\\fI{}\\fR", escape(&value_name(arg)));
        term = if term.is_empty() {
            value
        } else {
            format!("{term} {value}")
        };
    }
    let defaults: Vec<String> = (arg.get_default_values().iter())
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && takes_value(arg) {
        term.push_str(&format!(" [default: {}]", escape(&defaults.join(", "))));
    }
    term
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values()
}

/// `<LEVEL>`: the value's name, else the argument's, in capitals.
fn value_name(arg: &clap::Arg) -> String {
    let name = (arg.get_value_names())
        .and_then(|names| names.first())
        .map_or_else(
            || arg.get_id().as_str().to_ascii_uppercase(),
            ToString::to_string,
        );
    format!("<{name}>")
}

fn write_section(section: &Section, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, ".SH {}", section.title)?;
    for paragraph in &section.paragraphs {
        writeln!(out, ".PP\n{}", escape(paragraph))?;
    }
    for (term, meaning) in &section.terms {
        writeln!(out, ".TP\n\\fB{}\\fR\n{}", escape(term), escape(meaning))?;
    }
    Ok(())
}

/// Text made of paragraphs (a blank line between two) as roff.
fn paragraphs(text: &str) -> String {
    (text.split("\n\n"))
        .map(|p| escape(&p.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join("\n.PP\n")
}

/// `text` as roff reads it literally: backslashes and dashes escaped, and a
/// line that would start with a control character (`.` or `'`) guarded.
pub fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    (escaped.lines())
        .map(|line| match line.starts_with(['.', '\'']) {
            true => format!("\\&{line}"),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    #[command(name = "tool", version, about = "A tool")]
    struct Tool {
        #[command(subcommand)]
        command: Option<Sub>,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        /// Counts things.
        Count {
            /// How deep.
            #[arg(long, default_value_t = 3)]
            depth: u8,
            /// The file to read.
            file: String,
        },
    }

    fn text(sections: &[Section]) -> String {
        let command = <Tool as clap::CommandFactory>::command();
        let bytes = page(command, sections).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[test]
    fn subcommands_are_on_the_page_and_no_other_page_is_named() {
        let page = text(&[Section::terms(
            "EXIT STATUS",
            vec![("0".to_string(), "done".to_string())],
        )]);
        assert!(
            page.contains(".SS \"tool count [\\-\\-depth <DEPTH>] <FILE>\""),
            "{page}"
        );
        assert!(
            page.contains("\\fB\\-\\-depth\\fR \\fI<DEPTH>\\fR [default: 3]"),
            "{page}"
        );
        assert!(page.contains("Counts things"), "{page}");
        assert_eq!(page.matches(".ds Aq").count(), 2, "one preamble: {page}");
        assert!(
            page.contains(".SH EXIT STATUS\n.TP\n\\fB0\\fR\ndone"),
            "{page}"
        );
        assert!(!page.contains("tool\\-count(1)"), "{page}");
        assert!(!page.contains("tool-help"), "{page}");
    }

    #[test]
    fn text_is_taken_literally() {
        assert_eq!(escape("a-b \\ c"), "a\\-b \\e c");
        assert_eq!(escape(".hidden\n'quote"), "\\&.hidden\n\\&'quote");
    }
}
