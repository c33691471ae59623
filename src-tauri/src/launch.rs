//! What the window was started with: where the engine's files live, the view to open, and the
//! tray's word on why its engine did not start.
//!
//! The tray (`lull-desktop`) starts this process as `lull-window --data-dir D --config C
//! [--view V] [--engine-error MESSAGE]`; a person may start it by hand with the same flags as
//! the `lull` CLI (`--data-dir`/`LULL_DATA_DIR`, `--config`/`LULL_CONFIG`).

pub use lull::config::Locations;

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
