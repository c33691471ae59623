//! What the window was started with: where the engine's files live, the view to open, and the
//! tray's word on why its engine did not start.
//!
//! The tray (`lull-desktop`) starts this process as `lull-window --data-dir D --config C
//! [--view V] [--engine-error MESSAGE]`; a person may start it by hand with the same flags as
//! the `lull` CLI (`--data-dir`/`LULL_DATA_DIR`, `--config`/`LULL_CONFIG`).

use std::ffi::OsString;
use std::path::PathBuf;

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
    /// as `--view`) are left to their readers.
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

/// The flag that opens the window on one view (`drafts`, `reviews`; see `ui/src/lib/views.ts`).
pub const VIEW_FLAG: &str = "--view";
/// The flag by which the tray says why its engine could not start.
pub const ENGINE_ERROR_FLAG: &str = "--engine-error";

/// The value of `flag` in `args` (`--flag V` or `--flag=V`; the program name first); the last
/// one wins, and a flag with nothing after it counts as absent.
pub fn flag_value<S: AsRef<str>>(args: &[S], flag: &str) -> Option<String> {
    let mut found = None;
    let mut args = args.iter().skip(1).map(AsRef::as_ref);
    while let Some(arg) = args.next() {
        if arg == flag {
            if let Some(value) = args.next() {
                found = Some(value.to_owned());
            }
        } else if let Some(value) = arg
            .strip_prefix(flag)
            .and_then(|rest| rest.strip_prefix('='))
        {
            found = Some(value.to_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("lull-window")
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
            &[
                "--view",
                "drafts",
                "--data-dir",
                "/flag/data",
                "--config=/c.toml",
            ],
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
    fn a_flag_value_is_read_in_both_spellings_and_the_last_wins() {
        let check = |list: &[&str], expected: Option<&str>| {
            let argv: Vec<&str> = std::iter::once("lull-window")
                .chain(list.iter().copied())
                .collect();
            assert_eq!(
                flag_value(&argv, VIEW_FLAG).as_deref(),
                expected,
                "{list:?}"
            );
        };
        check(&[], None);
        check(&["--view", "drafts"], Some("drafts"));
        check(&["--view=reviews", "--data-dir", "/d"], Some("reviews"));
        check(&["--view", "drafts", "--view=jobs"], Some("jobs"));
        check(&["--view"], None);
        check(&["--viewer", "x"], None);
        check(
            &["--engine-error", "the port is taken", "--view", "overview"],
            Some("overview"),
        );
        let argv = ["lull-window", "--engine-error", "the port is taken"];
        assert_eq!(
            flag_value(&argv, ENGINE_ERROR_FLAG).as_deref(),
            Some("the port is taken")
        );
    }
}
