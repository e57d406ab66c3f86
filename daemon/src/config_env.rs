//! Settings from the environment: every setting of config/default.ron can
//! come from a variable `FLIPD_<NAME>`, the name in capitals (`FLIPD_LISTEN`,
//! `FLIPD_GRACE_SECS`), a setting of the `store`, `passwords` or `metrics`
//! group by its group and name (`FLIPD_STORE_PATH`,
//! `FLIPD_PASSWORDS_HASH_THREADS`, `FLIPD_METRICS_LISTEN`), a
//! group of the others whole (`FLIPD_RATE_LIMIT="(per_second: 50, burst:
//! 100)"`). They go over the file and under the flags. A value is written as
//! in the file, except that a text setting needs no quotes.
//!
//! Pure: the caller passes the variables in; which settings there are comes
//! from the embedded default file itself, so a new setting needs no word here.

use ron::Value;

use crate::config_default::DEFAULT_RON;

/// What every variable's name starts with.
pub const PREFIX: &str = "FLIPD_";

/// The groups whose settings are given one by one, as in a file.
const GROUPS: [&str; 3] = ["store", "passwords", "metrics"];

/// One setting a variable may give.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setting {
    /// `store`, or `None` at the top.
    group: Option<String>,
    name: String,
    /// Whether its value is text (quoted in RON).
    text: bool,
}

impl Setting {
    fn variable(&self) -> String {
        let name = match &self.group {
            Some(group) => format!("{group}_{}", self.name),
            None => self.name.clone(),
        };
        format!("{PREFIX}{}", name.to_ascii_uppercase())
    }

    /// The RON text that sets this setting to `value`.
    fn ron(&self, value: &str) -> String {
        let value = if self.text {
            quoted(value)
        } else {
            value.to_string()
        };
        match &self.group {
            Some(group) => format!("({group}: ({}: {value}))", self.name),
            None => format!("({}: {value})", self.name),
        }
    }
}

/// `value` as a RON string: quoted, with `"` and `\` escaped.
fn quoted(value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

/// The key of a map entry, if a name.
fn key_name(key: &Value) -> Option<String> {
    match key {
        Value::String(name) => Some(name.clone()),
        _ => None,
    }
}

/// Every setting of the embedded default, groups opened.
fn settings() -> Vec<Setting> {
    let Ok(Value::Map(top)) = ron::from_str::<Value>(DEFAULT_RON) else {
        return Vec::new();
    };
    let mut all = Vec::new();
    for (key, value) in top.iter() {
        let Some(name) = key_name(key) else { continue };
        all.push(Setting {
            group: None,
            text: matches!(value, Value::String(_)),
            name: name.clone(),
        });
        if let (true, Value::Map(fields)) = (GROUPS.contains(&name.as_str()), value) {
            for (field, value) in fields.iter() {
                let Some(field) = key_name(field) else {
                    continue;
                };
                all.push(Setting {
                    group: Some(name.clone()),
                    name: field,
                    text: matches!(value, Value::String(_)),
                });
            }
        }
    }
    all
}

/// The settings `variables` give, each as the variable's name and the RON
/// text that sets it, by the settings' names; or the first
/// variable with the prefix that names no setting.
pub fn overrides(variables: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let settings = settings();
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
        Some((variable, setting.ron(value)))
    });
    Ok(given.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_setting_of_the_file_has_a_variable() {
        let names: Vec<String> = settings().iter().map(Setting::variable).collect();
        for name in [
            "FLIPD_LISTEN",
            "FLIPD_GRACE_SECS",
            "FLIPD_RATE_LIMIT",
            "FLIPD_STORE",
            "FLIPD_STORE_PATH",
            "FLIPD_STORE_SYNCHRONOUS",
            "FLIPD_PASSWORDS_HASH_THREADS",
            "FLIPD_LOG_FILTER",
        ] {
            assert!(names.contains(&name.to_string()), "{name} in {names:?}");
        }
        assert!(!names.contains(&"FLIPD_RATE_LIMIT_BURST".to_string()));
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "one variable, one setting");
    }

    #[test]
    fn values_are_written_as_in_the_file_text_without_quotes() {
        let given = overrides(&vars(&[
            ("HOME", "/root"),
            ("FLIPD_STORE_PATH", "/var/lib/flip \"x\".db"),
            ("FLIPD_GRACE_SECS", "5"),
            ("FLIPD_STORE_SYNCHRONOUS", "normal"),
        ]))
        .unwrap();
        let mut config = Config::embedded().unwrap();
        for (variable, text) in &given {
            config = Config::parse_over(text, variable, config).unwrap();
        }
        assert_eq!(config.grace_secs, 5);
        assert_eq!(
            config.store.path,
            std::path::Path::new("/var/lib/flip \"x\".db")
        );
        assert_eq!(config.store.synchronous, crate::config::Synchronous::Normal);
        assert_eq!(
            config.store.batch_max,
            Config::embedded().unwrap().store.batch_max
        );
    }

    #[test]
    fn settings_that_agree_only_together_are_checked_together() {
        let both = vars(&[
            ("FLIPD_PASSWORDS_FAILURE_DELAY_MS", "10000"),
            ("FLIPD_PASSWORDS_FAILURE_DELAY_MAX_MS", "20000"),
        ]);
        let config = Config::embedded().unwrap().with_environment(&both).unwrap();
        assert_eq!(config.passwords.failure_delay_ms, 10_000);
        let alone = vars(&[("FLIPD_PASSWORDS_FAILURE_DELAY_MS", "10000")]);
        let refused = Config::embedded()
            .unwrap()
            .with_environment(&alone)
            .unwrap_err();
        assert_eq!(refused.source_name, "the environment");
    }

    #[test]
    fn a_variable_that_names_no_setting_is_refused() {
        let wrong = overrides(&vars(&[("FLIPD_GRACE", "5")])).unwrap_err();
        assert!(
            wrong.starts_with("FLIPD_GRACE is not a setting; there are "),
            "{wrong}"
        );
        assert!(wrong.contains("FLIPD_GRACE_SECS"), "{wrong}");
        assert_eq!(overrides(&vars(&[("PATH", "/bin")])), Ok(Vec::new()));
    }
}
