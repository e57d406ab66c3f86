//! How a setting is declared, once. `settings!` turns a table of settings
//! (name, type, default, meaning, whether SIGHUP applies it, the rules its
//! value keeps) into everything else that names them: the struct the daemon
//! reads, the partial struct a file or a variable fills and its merge over
//! the running values, the checks, the list of differences a reload logs,
//! and the [`Setting`] descriptors the environment's variables and the tests
//! are made from. `config.rs` holds the table itself.
//!
//! A leaf below `config.rs` and `config_env.rs`, so that the environment
//! reads the descriptors without importing the configuration back.

use std::fmt::Display;
use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// What every environment variable's name starts with.
pub const PREFIX: &str = "FLIPD_";

/// One setting as the environment, the documentation and the tests see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// As a file names it: `grace_secs`, `store.path`.
    pub name: String,
    /// Whether SIGHUP applies it to a running daemon. A group's members go
    /// with their group: a reload takes or keeps a group whole.
    pub live: bool,
    /// Whether its value is text: quoted in a file, bare in a variable.
    pub text: bool,
    /// Whether it is a group whose members are settings of their own.
    pub group: bool,
    /// What it means, from its declaration's doc comment.
    pub meaning: String,
}

impl Setting {
    /// The environment variable that sets it: `FLIPD_STORE_PATH`.
    pub fn variable(&self) -> String {
        variable(&self.name)
    }
}

/// The environment variable that sets the setting `name` (as a file names
/// it: `store.path`): `FLIPD_STORE_PATH`.
pub fn variable(name: &str) -> String {
    let name = name.replace('.', "_").to_ascii_uppercase();
    format!("{PREFIX}{name}")
}

/// A setting's type: how a file gives it and what it holds within.
pub trait Value: Clone + PartialEq + Serialize {
    /// What a file gives for it: `Option<Self>` for a value given whole
    /// (`rate_limit: (per_second: 5, burst: 10)`); for a group, a struct of
    /// its members, each optional (`store: (path: "x.db")`).
    type Partial: DeserializeOwned + Default;

    /// Whether it is text (quoted in RON, bare in a variable).
    const TEXT: bool = false;

    /// `partial` over `base`: what it leaves out keeps `base`'s value.
    fn over(partial: Self::Partial, base: &Self) -> Self;

    /// The settings `partial` leaves out, named under `name`.
    #[cfg(test)]
    fn missing(partial: &Self::Partial, name: &str) -> Vec<String>;

    /// A group's members, named under `name`; none for a value given whole.
    fn members(_name: &str) -> Vec<Setting> {
        Vec::new()
    }

    /// A group's members' rules; a value given whole has its rules at its
    /// declaration.
    fn check(&self, _name: &str) -> Result<(), String> {
        Ok(())
    }

    /// The variables (and their values) that give this value, named under
    /// `name`: the value itself, or each member of a group.
    fn environment(&self, name: &str, out: &mut Vec<(String, String)>);

    /// The value as a variable gives it: as in a file, text without quotes.
    fn bare(&self) -> String {
        ron::to_string(self).unwrap_or_default()
    }
}

/// [`Value::over`] for a value given whole: the file's, else `base`.
pub fn given_over<T: Clone>(partial: Option<T>, base: &T) -> T {
    partial.unwrap_or_else(|| base.clone())
}

/// [`Value::missing`] for a value given whole: `name` if the file left it out.
#[cfg(test)]
pub fn not_given<T>(partial: &Option<T>, name: &str) -> Vec<String> {
    match partial {
        Some(_) => Vec::new(),
        None => vec![name.to_string()],
    }
}

/// `Value` for types a file gives whole and that are not text (numbers,
/// words, groups given whole such as `rate_limit`).
macro_rules! whole {
    ($($ty:ty),* $(,)?) => {
        $(
            impl $crate::config_table::Value for $ty {
                type Partial = Option<$ty>;

                fn over(partial: Option<$ty>, base: &$ty) -> $ty {
                    $crate::config_table::given_over(partial, base)
                }

                #[cfg(test)]
                fn missing(partial: &Option<$ty>, name: &str) -> Vec<String> {
                    $crate::config_table::not_given(partial, name)
                }

                fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
                    out.push((name.to_string(), $crate::config_table::Value::bare(self)));
                }
            }
        )*
    };
}
pub(crate) use whole;

/// A text setting that may hold a secret (`StoreUrl`, `NatsUrl`: a tuple
/// of one `String` with a `redacted` method): shown only redacted, by
/// `Display`, `Debug`, serialising (what `--check-config` prints) and the
/// environment's listing; read whole from a file or a variable.
macro_rules! secret_text {
    ($type:ident) => {
        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.redacted())
            }
        }

        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($type), self.redacted())
            }
        }

        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.redacted())
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<$type, D::Error> {
                String::deserialize(deserializer).map($type)
            }
        }

        impl $crate::config_table::Value for $type {
            type Partial = Option<$type>;
            const TEXT: bool = true;

            fn over(partial: Option<$type>, base: &$type) -> $type {
                $crate::config_table::given_over(partial, base)
            }

            #[cfg(test)]
            fn missing(partial: &Option<$type>, name: &str) -> Vec<String> {
                $crate::config_table::not_given(partial, name)
            }

            fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
                out.push((name.to_string(), self.redacted()));
            }

            fn bare(&self) -> String {
                self.redacted()
            }
        }
    };
}
pub(crate) use secret_text;

whole!(usize, u64, u32, u8, bool);

impl Value for String {
    type Partial = Option<String>;
    const TEXT: bool = true;

    fn over(partial: Option<String>, base: &String) -> String {
        given_over(partial, base)
    }

    #[cfg(test)]
    fn missing(partial: &Option<String>, name: &str) -> Vec<String> {
        not_given(partial, name)
    }

    fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
        out.push((name.to_string(), self.clone()));
    }

    fn bare(&self) -> String {
        self.clone()
    }
}

impl Value for PathBuf {
    type Partial = Option<PathBuf>;
    const TEXT: bool = true;

    fn over(partial: Option<PathBuf>, base: &PathBuf) -> PathBuf {
        given_over(partial, base)
    }

    #[cfg(test)]
    fn missing(partial: &Option<PathBuf>, name: &str) -> Vec<String> {
        not_given(partial, name)
    }

    fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
        out.push((name.to_string(), self.bare()));
    }

    fn bare(&self) -> String {
        self.to_string_lossy().into_owned()
    }
}

/// `name` inside the group named `group` (or alone at the top).
pub fn qualified(group: &str, name: &str) -> String {
    match group {
        "" => name.to_string(),
        group => format!("{group}.{name}"),
    }
}

/// A declaration's doc comment as one line.
pub fn meaning(lines: &[&str]) -> String {
    let words: Vec<&str> = lines.iter().map(|line| line.trim()).collect();
    words.join(" ")
}

/// The rule "at least `min`".
pub fn at_least<T: PartialOrd + Display>(min: T) -> impl Fn(&T) -> Result<(), String> {
    move |value| match *value >= min {
        true => Ok(()),
        false => Err(format!("must be at least {min}")),
    }
}

/// The rule "at most `max`".
pub fn at_most<T: PartialOrd + Display>(max: T) -> impl Fn(&T) -> Result<(), String> {
    move |value| match *value <= max {
        true => Ok(()),
        false => Err(format!("must be at most {max}")),
    }
}

/// A rule in words: `holds`, or the value "must" what `why` says (`why`
/// starts with "must").
pub fn must<T: ?Sized>(
    holds: fn(&T) -> bool,
    why: &'static str,
) -> impl Fn(&T) -> Result<(), String> {
    move |value| match holds(value) {
        true => Ok(()),
        false => Err(why.to_string()),
    }
}

/// Declares a group of settings, one line each:
///
/// ```text
/// settings! {
///     /// What the group is.
///     pub struct Group, partial PartialGroup {
///         /// What the setting means.
///         name: Type = default, live_or_restart, rule, rule;
///     }
///     together: rule on the whole group;   (optional)
///     carried: /// doc
///              field: Type;                (optional: not settings, never
///                                           read from a file, kept by merges)
/// }
/// ```
///
/// `live` settings SIGHUP applies; `restart` ones wait for a restart. A rule
/// is a function of the value giving `Err("must ...")`; its message is put
/// after the setting's name as a file writes it (`store.batch_max must be at
/// least 1`); a `together` rule's message starts with a member's name and is
/// put after the group's.
macro_rules! settings {
    (@live live) => { true };
    (@live restart) => { false };
    (
        $(#[$meta:meta])*
        pub struct $name:ident, partial $partial:ident {
            $(
                $(#[doc = $doc:literal])*
                $field:ident: $ty:ty = $default:expr, $reload:ident $(, $rule:expr)*;
            )*
        }
        $(together: $($together:expr),+;)?
        $(carried: $($(#[doc = $cdoc:literal])* $carried:ident: $cty:ty),+;)?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
        pub struct $name {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
            $($(
                $(#[doc = $cdoc])*
                #[serde(skip)]
                pub $carried: $cty,
            )+)?
        }

        #[doc = concat!("[`", stringify!($name), "`] as a file gives it: every setting optional.")]
        #[derive(Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $partial {
            $(
                #[serde(default)]
                $field: <$ty as $crate::config_table::Value>::Partial,
            )*
        }

        impl $crate::config_table::Value for $name {
            type Partial = $partial;

            fn over(partial: $partial, base: &$name) -> $name {
                $name {
                    $($field: $crate::config_table::Value::over(partial.$field, &base.$field),)*
                    $($($carried: base.$carried.clone(),)+)?
                }
            }

            #[cfg(test)]
            fn missing(partial: &$partial, name: &str) -> Vec<String> {
                let mut missing = Vec::new();
                $(
                    let qualified = $crate::config_table::qualified(name, stringify!($field));
                    missing.extend(<$ty as $crate::config_table::Value>::missing(
                        &partial.$field,
                        &qualified,
                    ));
                )*
                missing
            }

            fn members(name: &str) -> Vec<$crate::config_table::Setting> {
                let mut all = Vec::new();
                $(
                    let qualified = $crate::config_table::qualified(name, stringify!($field));
                    let members = <$ty as $crate::config_table::Value>::members(&qualified);
                    all.push($crate::config_table::Setting {
                        name: qualified,
                        live: $crate::config_table::settings!(@live $reload),
                        text: <$ty as $crate::config_table::Value>::TEXT,
                        group: !members.is_empty(),
                        meaning: $crate::config_table::meaning(&[$($doc),*]),
                    });
                    all.extend(members);
                )*
                all
            }

            fn check(&self, name: &str) -> Result<(), String> {
                $(
                    let qualified = $crate::config_table::qualified(name, stringify!($field));
                    $(($rule)(&self.$field).map_err(|why| format!("{qualified} {why}"))?;)*
                    $crate::config_table::Value::check(&self.$field, &qualified)?;
                )*
                $($(
                    let within = $crate::config_table::qualified(name, "");
                    ($together)(self).map_err(|why| format!("{within}{why}"))?;
                )+)?
                Ok(())
            }

            fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
                $(
                    let qualified = $crate::config_table::qualified(name, stringify!($field));
                    $crate::config_table::Value::environment(&self.$field, &qualified, out);
                )*
            }
        }

        impl $name {
            /// Every setting at its declared default.
            pub fn declared() -> $name {
                $name {
                    $($field: $default,)*
                    $($($carried: Default::default(),)+)?
                }
            }

            /// The settings that differ between `self` and `other`, in the
            /// order declared; a group is named whole.
            pub fn differences(&self, other: &$name) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    if self.$field != other.$field {
                        names.push(stringify!($field));
                    }
                )*
                names
            }

            /// These settings with the ones SIGHUP applies taken from `file`.
            pub fn with_live_from(&self, file: &$name) -> $name {
                $name {
                    $($field: match $crate::config_table::settings!(@live $reload) {
                        true => file.$field.clone(),
                        false => self.$field.clone(),
                    },)*
                    $($($carried: self.$carried.clone(),)+)?
                }
            }
        }
    };
}
pub(crate) use settings;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_say_what_the_value_must_be() {
        assert_eq!(at_least(64)(&64), Ok(()));
        assert_eq!(at_least(64)(&63), Err("must be at least 64".to_string()));
        assert_eq!(at_most(90u8)(&91), Err("must be at most 90".to_string()));
        let named = must(|p: &PathBuf| !p.as_os_str().is_empty(), "must name a file");
        assert_eq!(named(&PathBuf::new()), Err("must name a file".to_string()));
    }

    #[test]
    fn a_variable_is_the_setting_in_capitals_under_its_group() {
        let setting = Setting {
            name: "store.path".to_string(),
            live: false,
            text: true,
            group: false,
            meaning: String::new(),
        };
        assert_eq!(setting.variable(), "FLIPD_STORE_PATH");
        assert_eq!(qualified("", "grace_secs"), "grace_secs");
        assert_eq!(
            meaning(&[" Seconds a seat", " is kept."]),
            "Seconds a seat is kept."
        );
    }
}
