//! What the command line asks: `lull-desktop [--hidden] [--data-dir D] [--config C]`, with
//! `LULL_DATA_DIR` and `LULL_CONFIG` read as the `lull` CLI reads them.

use std::ffi::OsString;

pub use lull::config::Locations;

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
    fn hidden_is_a_flag_of_its_own() {
        let none = |_: &str| None;
        assert!(Launch::from_args(args(&["--data-dir", "/d", "--hidden"]), none).hidden);
        assert!(!Launch::from_args(args(&["--data-dir", "/d"]), none).hidden);
        // The program's own name is not a flag, whatever it is called.
        assert!(!Launch::from_args(vec!["--hidden".into()], none).hidden);
    }
}
