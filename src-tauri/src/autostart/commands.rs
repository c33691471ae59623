//! Commands of the "autostart" domain (*Start at login* in Settings); see `COMMAND_NAMES`.
//!
//! The only commands that do not ask the engine: the login item is the person's desktop's.

use crate::autostart::LoginItem;
use crate::error::CommandError;
use lull::error_code::ErrorCode;

/// Whether the tray starts at login.
#[tauri::command]
pub fn get_autostart() -> Result<bool, CommandError> {
    let login = login_item()?;
    login.is_enabled().map_err(|error| failed(&login, error))
}

/// Makes the tray start at login, or not; answers whether it does now.
#[tauri::command]
pub fn set_autostart(enabled: bool) -> Result<bool, CommandError> {
    let login = login_item()?;
    login.set(enabled).map_err(|error| failed(&login, error))
}

fn login_item() -> Result<LoginItem, CommandError> {
    let exe = std::env::current_exe().map_err(|error| {
        CommandError::new(
            ErrorCode::AutostartFailed,
            format!("cannot tell where Lull is installed: {error}"),
        )
    })?;
    LoginItem::for_install(&exe, |name| std::env::var_os(name))
        .map_err(|message| CommandError::new(ErrorCode::AutostartFailed, message))
}

fn failed(login: &LoginItem, error: std::io::Error) -> CommandError {
    CommandError::new(
        ErrorCode::AutostartFailed,
        format!(
            "cannot change the login item {}: {error}",
            login.entry.display()
        ),
    )
}
