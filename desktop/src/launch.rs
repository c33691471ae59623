//! What the command line asks: `lull-desktop [--hidden] [--data-dir D] [--config C]`, with
//! `LULL_DATA_DIR` and `LULL_CONFIG` read as the `lull` CLI reads them.

use std::ffi::OsString;
use std::path::PathBuf;

/// Passed by the login item (autostart): start in the tray without opening the window.
pub const START_HIDDEN_FLAG: &str = "--hidden";

/// One launch of the app.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Stay in the tray: no window at start, and a second launch with it opens none either.
    pub hidden: bool,
    /// Where the engine's configuration and data live.
    pub locations: Locations,
}

impl Launch {
    /// This process's launch.
    pub fn from_env() -> Launch {
        Launch::from_args(std::env::args_os().collect(), |name| std::env::var_os(name))
    }

    /// Reads `args` (the program name first, as `std::env::args_os`), falling back to `env`.
    pub fn from_args(args: Vec<OsString>, env: impl Fn(&str) -> Option<OsString>) -> Launch {
        Launch {
            hidden: args.iter().skip(1).any(|arg| arg == START_HIDDEN_FLAG),
            locations: Locations::from_args(args, env),
        }
    }
}

/// Where the engine's configuration and data live, from the command line or the environment,
/// with the same flags and variables as the `lull` CLI (`--config`/`LULL_CONFIG`,
/// `--data-dir`/`LULL_DATA_DIR`). Unset means the XDG defaults of DESIGN §5.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The configuration file.
    pub config: Option<PathBuf>,
    /// The data directory.
    pub data_dir: Option<PathBuf>,
}

impl Locations {
    /// Reads `--config X` / `--config=X` and `--data-dir X` / `--data-dir=X` from `args` (the
    /// program name first, as `std::env::args_os`), falling back to `env`. Other arguments (such
    /// as `--hidden`) are left to their readers.
    pub fn from_args(
        args: impl IntoIterator<Item = OsString>,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Locations {
        let mut locations = Locations {
            config: env("LULL_CONFIG").map(PathBuf::from),
            data_dir: env("LULL_DATA_DIR").map(PathBuf::from),
        };
        let mut args = args.into_iter().skip(1);
        while let Some(arg) = args.next() {
            let arg = arg.to_string_lossy().into_owned();
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(OsString::from(value))),
                None => (arg, None),
            };
            let slot = match flag.as_str() {
                "--config" => &mut locations.config,
                "--data-dir" => &mut locations.data_dir,
                _ => continue,
            };
            if let Some(value) = inline.or_else(|| args.next()) {
                *slot = Some(PathBuf::from(value));
            }
        }
        locations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("lull-desktop")
            .chain(list.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn locations_come_from_flags_then_the_environment() {
        let env = |name: &str| match name {
            "LULL_DATA_DIR" => Some(OsString::from("/env/data")),
            _ => None,
        };
        let check = |list: &[&str], expected: Locations| {
            assert_eq!(Locations::from_args(args(list), env), expected, "{list:?}");
        };
        check(
            &[],
            Locations {
                config: None,
                data_dir: Some("/env/data".into()),
            },
        );
        check(
            &["--hidden", "--data-dir", "/flag/data", "--config=/c.toml"],
            Locations {
                config: Some("/c.toml".into()),
                data_dir: Some("/flag/data".into()),
            },
        );
        check(
            &["--data-dir=/a", "--data-dir"],
            Locations {
                config: None,
                data_dir: Some("/a".into()),
            },
        );
    }

    #[test]
    fn hidden_is_a_flag_of_its_own() {
        let none = |_: &str| None;
        assert!(Launch::from_args(args(&["--data-dir", "/d", "--hidden"]), none).hidden);
        assert!(!Launch::from_args(args(&["--data-dir", "/d"]), none).hidden);
        // The program's own name is not a flag, whatever it is called.
        assert!(!Launch::from_args(vec!["--hidden".into()], none).hidden);
    }
}
