//! *Start at login*: the XDG autostart entry `$XDG_CONFIG_HOME/autostart/lull.desktop` (else
//! `~/.config/autostart`), which starts the tray, `lull-desktop --hidden`, from the folder this
//! binary was installed in.
//!
//! A small writer rather than the `auto-launch` crate, which names the file after the app's
//! display name, leaves the program's path unquoted (a path with a space breaks) and writes in
//! place. Invariant: the entry is written whole or not at all (a temporary file beside it,
//! flushed, renamed over it), mode 0644; removing an absent entry is not an error.
//! XDG autostart is what Linux and BSD desktops read; on macOS and Windows the commands refuse.

pub mod commands;

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The entry's file name in the autostart folder.
pub const ENTRY_FILE: &str = "lull.desktop";
/// The tray's binary, a sibling of this one.
pub const TRAY_BINARY: &str = "lull-desktop";
/// Starts the tray without opening the window.
pub const HIDDEN_FLAG: &str = "--hidden";

/// The login item of one tray binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginItem {
    /// The entry's path (`…/autostart/lull.desktop`).
    pub entry: PathBuf,
    /// The tray binary it starts.
    pub tray: PathBuf,
}

impl LoginItem {
    /// The login item of this installation: the autostart folder from `env`
    /// (`XDG_CONFIG_HOME`, else `HOME`) and the tray binary next to `current_exe`.
    pub fn for_install(
        current_exe: &Path,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<LoginItem, String> {
        if cfg!(any(target_os = "macos", windows)) {
            return Err("start at login is not available on this system yet".to_owned());
        }
        let config_home = env("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".config")))
            .ok_or("cannot find the autostart folder: neither XDG_CONFIG_HOME nor HOME is set")?;
        let folder = current_exe
            .parent()
            .ok_or_else(|| format!("{} has no folder", current_exe.display()))?;
        Ok(LoginItem {
            entry: config_home.join("autostart").join(ENTRY_FILE),
            tray: folder.join(TRAY_BINARY),
        })
    }

    /// Whether the entry exists and is not switched off (`Hidden=true`, or GNOME's
    /// `X-GNOME-Autostart-enabled=false`, as a desktop's own settings may write).
    pub fn is_enabled(&self) -> std::io::Result<bool> {
        let text = match std::fs::read_to_string(&self.entry) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        let switched_off = text
            .lines()
            .map(str::trim)
            .any(|line| line == "Hidden=true" || line == "X-GNOME-Autostart-enabled=false");
        Ok(!switched_off)
    }

    /// Writes the entry (or removes it) and answers whether it is enabled now.
    pub fn set(&self, enabled: bool) -> std::io::Result<bool> {
        if enabled {
            self.write()?;
        } else {
            match std::fs::remove_file(&self.entry) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        self.is_enabled()
    }

    fn write(&self) -> std::io::Result<()> {
        let text = entry_text(&self.tray)?;
        let folder = self.entry.parent().expect("the entry is inside a folder");
        std::fs::create_dir_all(folder)?;
        let temporary = folder.join(format!(".{ENTRY_FILE}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(text.as_bytes())?;
            set_readable_by_all(&file)?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.entry)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}

#[cfg(unix)]
fn set_readable_by_all(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_readable_by_all(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// The desktop entry that starts `tray` hidden.
fn entry_text(tray: &Path) -> std::io::Result<String> {
    let exec = format!("{} {HIDDEN_FLAG}", exec_argument(tray)?);
    Ok(format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Lull\n\
         Comment=Lull's learning engine, in the tray\n\
         Exec={exec}\n\
         Terminal=false\n\
         X-GNOME-Autostart-enabled=true\n"
    ))
}

/// `path` as one quoted argument of an `Exec` key (the Desktop Entry Specification): inside
/// double quotes `"`, `` ` ``, `$` and `\` are escaped with a backslash, then the value's own
/// escaping doubles every backslash, and `%` (a field code) is written `%%`.
fn exec_argument(path: &Path) -> std::io::Result<String> {
    let text = path.to_str().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is not UTF-8, which a desktop entry cannot hold",
                path.display()
            ),
        )
    })?;
    if text.chars().any(char::is_control) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{text:?} holds a control character, which a desktop entry cannot hold"),
        ));
    }
    let mut quoted = String::from("\"");
    for character in text.chars() {
        if matches!(character, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(character);
    }
    quoted.push('"');
    Ok(quoted.replace('\\', "\\\\").replace('%', "%%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(dir: &Path, tray: &str) -> LoginItem {
        LoginItem {
            entry: dir.join("autostart").join(ENTRY_FILE),
            tray: PathBuf::from(tray),
        }
    }

    #[test]
    fn enabling_writes_the_entry_and_disabling_removes_it_both_twice() {
        let dir = tempfile::tempdir().unwrap();
        let login = item(dir.path(), "/usr/bin/lull-desktop");
        assert!(!login.is_enabled().unwrap());
        assert!(!login.set(false).unwrap(), "removing nothing is fine");

        assert!(login.set(true).unwrap());
        assert!(
            login.set(true).unwrap(),
            "enabling again rewrites the same entry"
        );
        let text = std::fs::read_to_string(&login.entry).unwrap();
        for line in [
            "[Desktop Entry]",
            "Type=Application",
            "Name=Lull",
            "Exec=\"/usr/bin/lull-desktop\" --hidden",
            "X-GNOME-Autostart-enabled=true",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&login.entry)
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o644);
        }
        let left: Vec<_> = std::fs::read_dir(login.entry.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, [ENTRY_FILE], "no temporary file is left behind");

        assert!(!login.set(false).unwrap());
        assert!(!login.entry.exists());
        assert!(!login.set(false).unwrap());
    }

    #[test]
    fn an_entry_the_desktop_switched_off_reads_as_off() {
        let dir = tempfile::tempdir().unwrap();
        let login = item(dir.path(), "/usr/bin/lull-desktop");
        login.set(true).unwrap();
        let text = std::fs::read_to_string(&login.entry).unwrap();
        std::fs::write(&login.entry, format!("{text}Hidden=true\n")).unwrap();
        assert!(!login.is_enabled().unwrap());
        assert!(login.set(true).unwrap(), "enabling writes it anew");
    }

    #[test]
    fn a_path_with_spaces_and_specials_is_one_quoted_argument() {
        let check = |path: &str, expected: &str| {
            assert_eq!(exec_argument(Path::new(path)).unwrap(), expected, "{path}");
        };
        check(
            "/opt/My Apps/lull-desktop",
            r#""/opt/My Apps/lull-desktop""#,
        );
        check("/opt/100%/lull-desktop", r#""/opt/100%%/lull-desktop""#);
        check(r#"/opt/a"b/lull-desktop"#, r#""/opt/a\\"b/lull-desktop""#);
        check("/opt/$x/lull-desktop", r#""/opt/\\$x/lull-desktop""#);
        check(r"/opt/a\b/lull-desktop", r#""/opt/a\\\\b/lull-desktop""#);
        assert!(exec_argument(Path::new("/opt/a\nb")).is_err());

        let dir = tempfile::tempdir().unwrap();
        let login = item(dir.path(), "/opt/My Apps/lull-desktop");
        login.set(true).unwrap();
        let text = std::fs::read_to_string(&login.entry).unwrap();
        assert!(
            text.contains("Exec=\"/opt/My Apps/lull-desktop\" --hidden\n"),
            "{text}"
        );
    }

    #[test]
    fn the_folder_and_the_tray_come_from_the_environment_and_this_binary() {
        let exe = Path::new("/opt/lull/lull-window");
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        };
        let from_xdg =
            LoginItem::for_install(exe, env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]));
        assert_eq!(
            from_xdg.unwrap(),
            LoginItem {
                entry: "/x/autostart/lull.desktop".into(),
                tray: "/opt/lull/lull-desktop".into(),
            }
        );
        // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
        let from_home =
            LoginItem::for_install(exe, env(&[("XDG_CONFIG_HOME", "x"), ("HOME", "/h")]));
        assert_eq!(
            from_home.unwrap().entry,
            PathBuf::from("/h/.config/autostart/lull.desktop")
        );
        assert!(LoginItem::for_install(exe, env(&[])).is_err());
    }
}
