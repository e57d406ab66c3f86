//! Settings from the environment: every setting can come from a variable
//! `FLIPD_<NAME>`, the name in capitals (`FLIPD_LISTEN`,
//! `FLIPD_GRACE_SECS`), a member of a group by its group and name
//! (`FLIPD_STORE_PATH`, `FLIPD_PASSWORDS_HASH_THREADS`,
//! `FLIPD_METRICS_LISTEN`), a value given whole as in a file
//! (`FLIPD_RATE_LIMIT="(per_second: 50, burst: 100)"`). They go over the
//! file and under the flags. A value is written as in the file, except that
//! a text setting needs no quotes.
//!
//! Pure: the caller passes the variables in, and the settings: their
//! declarations ([`crate::config_table::Setting`]) say which there are, so a
//! new setting needs no word here.

use crate::config_table::{PREFIX, Setting};

/// The RON text that sets `setting` to `value` (as a variable gives it),
/// nested in its groups: `(store: (path: "x.db"))`.
fn ron(setting: &Setting, value: &str) -> String {
    let mut text = match setting.text {
        // Quoted as RON quotes it, so that any text comes back as it was.
        true => ron::to_string(value).unwrap_or_default(),
        false => value.to_string(),
    };
    for name in setting.name.rsplit('.') {
        text = format!("({name}: {text})");
    }
    text
}

/// The settings `variables` give, each as the variable's name and the RON
/// text that sets it, in the order of `settings`; or the first variable
/// with the prefix that names no setting.
pub fn overrides(
    settings: &[Setting],
    variables: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    for (name, _) in variables {
        if name.starts_with(PREFIX) && !settings.iter().any(|s| s.variable() == *name) {
            let known: Vec<String> = settings.iter().map(Setting::variable).collect();
            return Err(format!(
                "{name} is not a setting; there are {}",
                known.join(", ")
            ));
        }
    }
    let given = settings.iter().filter_map(|setting| {
        let variable = setting.variable();
        let (_, value) = variables.iter().find(|(name, _)| *name == variable)?;
        Some((variable, ron(setting, value)))
    });
    Ok(given.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, text: bool) -> Setting {
        Setting {
            name: name.to_string(),
            live: false,
            text,
            group: false,
            meaning: String::new(),
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_are_written_as_in_the_file_text_quoted_for_them() {
        let settings = [setting("grace_secs", false), setting("store.path", true)];
        let given = overrides(
            &settings,
            &vars(&[
                ("HOME", "/root"),
                ("FLIPD_STORE_PATH", "/var/lib/flip \"x\".db"),
                ("FLIPD_GRACE_SECS", "5"),
            ]),
        );
        let expected = vec![
            (
                "FLIPD_GRACE_SECS".to_string(),
                "(grace_secs: 5)".to_string(),
            ),
            (
                "FLIPD_STORE_PATH".to_string(),
                r#"(store: (path: "/var/lib/flip \"x\".db"))"#.to_string(),
            ),
        ];
        assert_eq!(given, Ok(expected));
    }

    #[test]
    fn a_variable_that_names_no_setting_is_refused() {
        let settings = [setting("grace_secs", false)];
        let wrong = overrides(&settings, &vars(&[("FLIPD_GRACE", "5")])).unwrap_err();
        assert_eq!(
            wrong,
            "FLIPD_GRACE is not a setting; there are FLIPD_GRACE_SECS"
        );
        let none = overrides(&settings, &vars(&[("PATH", "/bin")]));
        assert_eq!(none, Ok(Vec::new()));
    }
}
