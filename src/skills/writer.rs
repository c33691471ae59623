//! Writing into the skills directory: the only code in Lull that does (approving a draft,
//! rolling a skill back).
//!
//! Every write is guarded by what the caller expects on disk ([`Expected`]): nothing, or a file
//! with a given sha256. The bytes on disk are read again right before the rename, so a skill the
//! person edited, created or removed after Lull read it is never overwritten: the write fails
//! with [`WriteError::Changed`] and the caller shows a fresh diff instead.
//!
//! A write is atomic: the text goes to a temporary file in the skill's own folder (its name
//! starts with `.`, and the scanner only ever reads `<folder>/SKILL.md`), is flushed to disk,
//! then renamed over SKILL.md, and the folder is flushed. A failure leaves the old file as it
//! was and removes the temporary one; one a crash left behind is removed by
//! [`remove_leftover_temp_files`] at the next start.
//!
//! Links are never followed below the skills directory: a skill folder or a SKILL.md that is a
//! symlink is refused (the directory itself may be one, as the scanner allows). On unix the skill
//! folder is opened once (`O_NOFOLLOW`, checked to be the folder inspected, by device and inode)
//! and the temporary file is created, renamed and removed relative to that open folder
//! (`openat`, `renameat`, `unlinkat`), so a folder swapped for a link at any moment cannot lead
//! Lull's bytes outside the folder it checked. A swap is also caught, and the write refused, by
//! comparing the folder's identity before and after the temporary file is written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::skill::{validate_skill_name, SkillError, MAX_SKILL_MD_BYTES, SKILL_FILE_NAME};

/// Longest time spent computing a diff: past it, `similar` settles for a correct but less
/// minimal diff. Two unrelated texts near [`MAX_SKILL_MD_BYTES`] would otherwise take seconds.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// A SKILL.md as it is on disk: what a draft's diff is made against, and the sha256 its
/// approval will expect to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The file's text.
    pub text: String,
    /// [`sha256_hex`] of the file's bytes.
    pub sha256: String,
}

/// What the writer expects on disk before it writes, so that a file changed since Lull read
/// it is never overwritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// No SKILL.md (a new skill).
    Absent,
    /// A SKILL.md with this sha256 (hex, as [`sha256_hex`] gives it).
    Sha256(String),
}

/// Why a skill could not be read, written or removed; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The name is not a single folder name inside the skills directory.
    #[error(
        "skill name {name:?} would lead outside the skills folder: a skill's name is one folder \
         name, without `/`, `\\` or `:` and not starting with `.` (as `..` does)"
    )]
    Escapes {
        /// The name given.
        name: String,
    },
    /// The name breaks the naming rule ([`validate_skill_name`]).
    #[error(transparent)]
    BadName(SkillError),
    /// The skill folder or its SKILL.md is a symlink.
    #[error(
        "{} is a symlink; Lull does not follow links inside the skills folder: replace the link \
         with a copy of what it points to, then try again",
        path.display()
    )]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The skill folder is not a folder, or SKILL.md is not a regular file.
    #[error("{} is not a {expected}: move it out of the way, then try again", path.display())]
    NotRegular {
        /// What is there.
        path: PathBuf,
        /// `"folder"` or `"regular file"`.
        expected: &'static str,
    },
    /// The SKILL.md on disk is not UTF-8 text.
    #[error(
        "{} is not UTF-8 text, so Lull cannot show or replace it: fix or move the file, then \
         try again",
        path.display()
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// What is on disk is not what the caller expected: the file changed, was created or was
    /// removed since Lull read it. Nothing was written.
    #[error("{}", changed_message(name, expected, found.as_deref()))]
    Changed {
        /// The skill.
        name: String,
        /// What the caller expected.
        expected: Expected,
        /// The sha256 of the SKILL.md found, or `None` when there is none.
        found: Option<String>,
    },
    /// The skill folder was replaced by another one while Lull wrote into it.
    #[error(
        "the skill folder {} was replaced while Lull wrote into it; nothing was written: try again",
        path.display()
    )]
    FolderReplaced {
        /// The folder.
        path: PathBuf,
    },
    /// The text to write, or the file on disk, is larger than [`MAX_SKILL_MD_BYTES`].
    #[error(
        "skill {name:?}'s SKILL.md would be {bytes} bytes, more than the {max} a skill may have: \
         shorten it"
    )]
    TooLarge {
        /// The skill.
        name: String,
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// The disk holding the skills folder is full. Nothing was written.
    #[error(
        "the disk holding {} is full: free some space there, then try again (nothing was \
         written)",
        path.display()
    )]
    Full {
        /// Where the write was refused.
        path: PathBuf,
    },
    /// The file system refused.
    #[error(
        "cannot {action} {}: {source} (check that the skills folder exists and you can write \
         to it)",
        path.display()
    )]
    Io {
        /// What Lull was doing, as a verb phrase.
        action: &'static str,
        /// The path it was doing it to.
        path: PathBuf,
        /// What the file system said.
        source: io::Error,
    },
}

fn changed_message(name: &str, expected: &Expected, found: Option<&str>) -> String {
    let what = match (expected, found) {
        (Expected::Absent, _) => "was created on disk".to_owned(),
        (Expected::Sha256(_), None) => "was removed from disk".to_owned(),
        (Expected::Sha256(expected), Some(found)) => format!(
            "changed on disk (sha256 {} expected, {} found)",
            short(expected),
            short(found)
        ),
    };
    format!(
        "skill {name:?}'s SKILL.md {what} after Lull read it; nothing was written: look at the \
         new text, then try again"
    )
}

fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// The sha256 of a skill's bytes as lowercase hex. One function for the file on disk, the
/// provenance Lull records and the safety report (`SafetyReport::sha256`), so all three compare
/// equal for the same text.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Reads `<dir>/<name>/SKILL.md`, or `None` when there is none: what a draft's diff is made
/// against and what its approval expects. Refuses a symlinked folder or file, a file that is
/// not UTF-8 or is larger than [`MAX_SKILL_MD_BYTES`].
pub fn read_skill_file(dir: &Path, name: &str) -> Result<Option<SkillFile>, WriteError> {
    check_name(name)?;
    let folder = dir.join(name);
    if folder_identity(&folder)?.is_none() {
        return Ok(None);
    }
    Ok(read_current(&folder, name)?.map(|current| current.file))
}

/// Writes `text` as `<dir>/<name>/SKILL.md` atomically, if what is on disk is what `expected`
/// says both before the write and right before the rename; returns the sha256 written. Creates
/// `dir` and the skill folder if needed (and removes a folder it created if the write fails).
/// A replaced file keeps its permissions.
pub fn write_skill_file(
    dir: &Path,
    name: &str,
    text: &str,
    expected: &Expected,
) -> Result<String, WriteError> {
    check_name(name)?;
    let bytes = text.len() as u64;
    if bytes > MAX_SKILL_MD_BYTES {
        return Err(WriteError::TooLarge {
            name: name.to_owned(),
            bytes,
            max: MAX_SKILL_MD_BYTES,
        });
    }
    fs::create_dir_all(dir).map_err(|source| io_error("create the skills folder", dir, source))?;
    let folder = dir.join(name);
    let (identity, created) = open_or_create_folder(&folder)?;
    let written = replace_skill_md(&folder, identity, name, text, expected);
    if created {
        match &written {
            Ok(_) => sync_folder_or_warn(dir),
            // Only an empty folder goes; a folder someone filled meanwhile stays.
            Err(_) => drop(fs::remove_dir(&folder)),
        }
    }
    written
}

/// Removes `<dir>/<name>/SKILL.md` if its sha256 is `expected_sha256` (rolling back a skill
/// Lull created, which has no earlier text to write back), then the folder if that left it
/// empty. Refuses a file that changed since
/// Lull read it, a missing one, and symlinks.
pub fn remove_skill_file(dir: &Path, name: &str, expected_sha256: &str) -> Result<(), WriteError> {
    check_name(name)?;
    let expected = Expected::Sha256(expected_sha256.to_owned());
    let folder = dir.join(name);
    let Some(identity) = folder_identity(&folder)? else {
        return check_expected(name, &expected, None);
    };
    check_unchanged(&folder, identity, name, &expected)?;
    let path = folder.join(SKILL_FILE_NAME);
    fs::remove_file(&path).map_err(|source| io_error("remove", &path, source))?;
    sync_folder_or_warn(&folder);
    match fs::remove_dir(&folder) {
        Ok(()) => sync_folder_or_warn(dir),
        Err(err) if err.kind() == io::ErrorKind::DirectoryNotEmpty => {}
        // The skill is gone; an empty folder left behind is not a skill to the scanner.
        Err(err) => {
            tracing::warn!(
                folder = %folder.display(),
                error = %err,
                "cannot remove the emptied skill folder"
            );
        }
    }
    Ok(())
}

/// A unified diff from the SKILL.md on disk (`None`: there is none) to `new`, with git's
/// headers (`a/<name>/SKILL.md`, `b/<name>/SKILL.md`, `/dev/null`), for the person to review
/// before approving. Empty when there is no line to show.
pub fn unified_diff(name: &str, old: Option<&str>, new: &str) -> String {
    let old_header = match old {
        Some(_) => format!("a/{name}/{SKILL_FILE_NAME}"),
        None => "/dev/null".to_owned(),
    };
    let new_header = format!("b/{name}/{SKILL_FILE_NAME}");
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.unwrap_or(""), new)
        .unified_diff()
        .header(&old_header, &new_header)
        .to_string()
}

/// Refuses a name that would leave `dir` (checked first, for a message that says so), then one
/// that breaks the naming rule.
fn check_name(name: &str) -> Result<(), WriteError> {
    // `/` and `\` cover absolute paths on unix and Windows, `:` a Windows drive prefix; with
    // no separator, a leading `.` covers `.` and `..`.
    let escapes = name.starts_with('.') || name.contains(['/', '\\', ':']);
    if escapes {
        return Err(WriteError::Escapes {
            name: name.to_owned(),
        });
    }
    validate_skill_name(name).map_err(WriteError::BadName)
}

/// Which directory a skill folder is, so a swap can be told apart from the folder checked.
/// On platforms without device and inode numbers every real folder compares equal, and only a
/// swap for a symlink or a file is caught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    #[cfg(unix)]
    device: u64,
    #[cfg(unix)]
    inode: u64,
}

impl Identity {
    fn of(metadata: &fs::Metadata) -> Identity {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Identity {
                device: metadata.dev(),
                inode: metadata.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            Identity {}
        }
    }
}

/// The skill folder's identity, `None` when it does not exist; a symlink or a non-folder is
/// refused.
fn folder_identity(folder: &Path) -> Result<Option<Identity>, WriteError> {
    let metadata = match fs::symlink_metadata(folder) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io_error("inspect", folder, source)),
    };
    if metadata.file_type().is_symlink() {
        return Err(WriteError::Symlink {
            path: folder.to_path_buf(),
        });
    }
    if !metadata.is_dir() {
        return Err(WriteError::NotRegular {
            path: folder.to_path_buf(),
            expected: "folder",
        });
    }
    Ok(Some(Identity::of(&metadata)))
}

/// The skill folder's identity, creating the folder if needed; `true` when this call created
/// it.
fn open_or_create_folder(folder: &Path) -> Result<(Identity, bool), WriteError> {
    if let Some(identity) = folder_identity(folder)? {
        return Ok((identity, false));
    }
    let created = match fs::create_dir(folder) {
        Ok(()) => true,
        // Someone else created it meanwhile: check what they created.
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => false,
        Err(source) => return Err(io_error("create the skill folder", folder, source)),
    };
    match folder_identity(folder)? {
        Some(identity) => Ok((identity, created)),
        None => Err(WriteError::FolderReplaced {
            path: folder.to_path_buf(),
        }),
    }
}

/// A SKILL.md read from disk, with the permissions a replacement keeps.
struct Current {
    file: SkillFile,
    permissions: fs::Permissions,
}

/// SKILL.md in `folder` as it is now, `None` when there is none; refuses a symlink, anything
/// but a regular file, a file too large or not UTF-8.
fn read_current(folder: &Path, name: &str) -> Result<Option<Current>, WriteError> {
    let path = folder.join(SKILL_FILE_NAME);
    let metadata = match fs::symlink_metadata(&path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io_error("inspect", &path, source)),
    };
    check_regular_file(&path, &metadata)?;
    let file = open_without_following(&path).map_err(|source| {
        if is_symlink_refusal(&source) {
            WriteError::Symlink { path: path.clone() }
        } else {
            io_error("read", &path, source)
        }
    })?;
    // Checked again on the open file: the path may have been swapped since.
    let metadata = file
        .metadata()
        .map_err(|source| io_error("read", &path, source))?;
    check_regular_file(&path, &metadata)?;
    let too_large = |bytes: u64| WriteError::TooLarge {
        name: name.to_owned(),
        bytes,
        max: MAX_SKILL_MD_BYTES,
    };
    if metadata.len() > MAX_SKILL_MD_BYTES {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_MD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| io_error("read", &path, source))?;
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let sha256 = sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| WriteError::NotUtf8 { path })?;
    Ok(Some(Current {
        file: SkillFile { text, sha256 },
        permissions: metadata.permissions(),
    }))
}

fn check_regular_file(path: &Path, metadata: &fs::Metadata) -> Result<(), WriteError> {
    if metadata.file_type().is_symlink() {
        return Err(WriteError::Symlink {
            path: path.to_path_buf(),
        });
    }
    if !metadata.is_file() {
        return Err(WriteError::NotRegular {
            path: path.to_path_buf(),
            expected: "regular file",
        });
    }
    Ok(())
}

/// Opens a file for reading without following a symlink in its last component (on unix;
/// `O_NONBLOCK` so a FIFO swapped in cannot block the open; it changes nothing for a regular
/// file).
fn open_without_following(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

fn is_symlink_refusal(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// Refuses unless what is on disk is what `expected` says.
fn check_expected(
    name: &str,
    expected: &Expected,
    found: Option<&SkillFile>,
) -> Result<(), WriteError> {
    let found = found.map(|file| file.sha256.as_str());
    let matches = match (expected, found) {
        (Expected::Absent, None) => true,
        (Expected::Sha256(expected), Some(found)) => expected.eq_ignore_ascii_case(found),
        _ => false,
    };
    if matches {
        return Ok(());
    }
    Err(WriteError::Changed {
        name: name.to_owned(),
        expected: expected.clone(),
        found: found.map(str::to_owned),
    })
}

/// Refuses unless `folder` is still the folder first checked and its SKILL.md is what
/// `expected` says; returns that SKILL.md.
fn check_unchanged(
    folder: &Path,
    identity: Identity,
    name: &str,
    expected: &Expected,
) -> Result<Option<Current>, WriteError> {
    if folder_identity(folder)? != Some(identity) {
        return Err(WriteError::FolderReplaced {
            path: folder.to_path_buf(),
        });
    }
    let current = read_current(folder, name)?;
    check_expected(
        name,
        expected,
        current.as_ref().map(|current| &current.file),
    )?;
    Ok(current)
}

/// The write itself: expected state checked, temporary file written and flushed, checked
/// again, renamed over SKILL.md.
fn replace_skill_md(
    folder: &Path,
    identity: Identity,
    name: &str,
    text: &str,
    expected: &Expected,
) -> Result<String, WriteError> {
    let open = OpenFolder::open(folder, identity)?;
    let before = check_unchanged(folder, identity, name, expected)?;
    hooks::run(hooks::Step::CreateTemp, folder)
        .map_err(|source| io_error("create a temporary file in", folder, source))?;
    let (temp, mut file) = TempFile::create(&open)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| hooks::run(hooks::Step::WriteTemp, &temp.path()))
        .and_then(|()| match &before {
            Some(before) => file.set_permissions(before.permissions.clone()),
            None => Ok(()),
        })
        .and_then(|()| file.sync_all());
    drop(file);
    written.map_err(|source| io_error("write", &temp.path(), source))?;

    check_unchanged(folder, identity, name, expected)?;
    temp.rename_to(SKILL_FILE_NAME)
        .map_err(|source| io_error("replace", &folder.join(SKILL_FILE_NAME), source))?;
    open.sync_or_warn();
    Ok(sha256_hex(text.as_bytes()))
}

/// The skill folder a write goes into, held open on unix: every name the write creates, renames
/// or removes is resolved inside this folder, whatever its path names by then.
struct OpenFolder {
    path: PathBuf,
    #[cfg(unix)]
    dir: File,
}

impl OpenFolder {
    /// Opens `path`, refusing a link, and anything but the folder inspected as `identity`.
    fn open(path: &Path, identity: Identity) -> Result<OpenFolder, WriteError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                .open(path)
                .map_err(|source| {
                    if is_symlink_refusal(&source) {
                        WriteError::Symlink {
                            path: path.to_path_buf(),
                        }
                    } else {
                        io_error("open", path, source)
                    }
                })?;
            let metadata = dir
                .metadata()
                .map_err(|source| io_error("open", path, source))?;
            if Identity::of(&metadata) != identity {
                return Err(WriteError::FolderReplaced {
                    path: path.to_path_buf(),
                });
            }
            Ok(OpenFolder {
                path: path.to_path_buf(),
                dir,
            })
        }
        #[cfg(not(unix))]
        {
            let _ = identity;
            Ok(OpenFolder {
                path: path.to_path_buf(),
            })
        }
    }

    /// Creates the file `name` in the folder; never an existing one, never through a link.
    fn create_new(&self, name: &str) -> io::Result<File> {
        #[cfg(unix)]
        {
            use std::os::fd::{AsRawFd, FromRawFd};
            let name = c_name(name)?;
            let flags =
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: `self.dir` is an open folder and `name` a NUL-terminated string; a
            // returned descriptor is new and owned by the `File` made from it.
            let fd = unsafe {
                libc::openat(
                    self.dir.as_raw_fd(),
                    name.as_ptr(),
                    flags,
                    0o666 as libc::c_uint,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` was just returned by openat and nothing else owns it.
            Ok(unsafe { File::from_raw_fd(fd) })
        }
        #[cfg(not(unix))]
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.path.join(name))
    }

    /// Renames `from` to `to`, both in the folder.
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let (from, to) = (c_name(from)?, c_name(to)?);
            let dir = self.dir.as_raw_fd();
            // SAFETY: both names are NUL-terminated and resolved in the open folder `dir`.
            match unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) } {
                0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
        #[cfg(not(unix))]
        fs::rename(self.path.join(from), self.path.join(to))
    }

    /// Removes the file `name` from the folder.
    fn remove(&self, name: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let name = c_name(name)?;
            // SAFETY: `name` is NUL-terminated and resolved in the open folder.
            match unsafe { libc::unlinkat(self.dir.as_raw_fd(), name.as_ptr(), 0) } {
                0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
        #[cfg(not(unix))]
        fs::remove_file(self.path.join(name))
    }

    /// Flushes the folder's entries to disk, as [`sync_folder_or_warn`] does by path.
    fn sync_or_warn(&self) {
        #[cfg(unix)]
        if let Err(err) = self.dir.sync_all() {
            tracing::warn!(
                folder = %self.path.display(),
                error = %err,
                "cannot flush the skill folder to disk"
            );
        }
        #[cfg(not(unix))]
        sync_folder_or_warn(&self.path);
    }
}

/// A file name as the C string the `*at` calls take; a name with NUL is refused (Lull's own
/// names never have one).
#[cfg(unix)]
fn c_name(name: &str) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// A temporary file beside SKILL.md, removed when dropped unless it was renamed into place.
struct TempFile<'a> {
    folder: &'a OpenFolder,
    name: String,
    renamed: bool,
}

impl<'a> TempFile<'a> {
    /// Creates a new, empty temporary file in `folder`.
    fn create(folder: &'a OpenFolder) -> Result<(TempFile<'a>, File), WriteError> {
        let name = temp_name(&uuid::Uuid::new_v4().simple().to_string());
        let file = folder
            .create_new(&name)
            .map_err(|source| io_error("create a temporary file in", &folder.path, source))?;
        let temp = TempFile {
            folder,
            name,
            renamed: false,
        };
        Ok((temp, file))
    }

    /// Where the file is, for messages (and for the tests' hooks).
    fn path(&self) -> PathBuf {
        self.folder.path.join(&self.name)
    }

    fn rename_to(mut self, target: &str) -> io::Result<()> {
        self.folder.rename(&self.name, target)?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for TempFile<'_> {
    /// Removes the file from the folder it was created in (on unix, even if that folder's path
    /// now names a link: the removal never follows it).
    fn drop(&mut self) {
        if self.renamed {
            return;
        }
        if let Err(err) = self.folder.remove(&self.name) {
            tracing::warn!(
                file = %self.path().display(),
                error = %err,
                "cannot remove a temporary skill file; the scanner ignores it, delete it by hand"
            );
        }
    }
}

/// The name of a temporary file beside SKILL.md: `.SKILL.md.<id>.tmp`.
fn temp_name(id: &str) -> String {
    format!(".{SKILL_FILE_NAME}.{id}.tmp")
}

/// Whether `name` is one [`temp_name`] gives (its id a simple UUID: 32 hex digits).
fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(|name| name.strip_prefix(&format!(".{SKILL_FILE_NAME}.")))
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Removes the temporary files that writes cut off by a crash left beside the SKILL.md files
/// of `dir` (the scanner ignores them, but nothing else would ever remove them), and a skill
/// folder they leave empty (a new skill whose first write was cut off). Only real folders and
/// regular files are looked at, never through a link. Runs at start, while no write can be
/// under way: one engine per data folder. What cannot be removed is logged, never an error.
/// Returns the files removed.
pub fn remove_leftover_temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(folders) = fs::read_dir(dir) else {
        return removed;
    };
    for folder in folders.filter_map(Result::ok) {
        if !folder.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let folder = folder.path();
        let Ok(files) = fs::read_dir(&folder) else {
            continue;
        };
        let before = removed.len();
        for file in files.filter_map(Result::ok) {
            if !(file.file_type().is_ok_and(|kind| kind.is_file())
                && is_temp_name(&file.file_name()))
            {
                continue;
            }
            match fs::remove_file(file.path()) {
                Ok(()) => removed.push(file.path()),
                Err(err) => tracing::warn!(
                    file = %file.path().display(),
                    error = %err,
                    "cannot remove a temporary skill file a crash left; the scanner ignores it, delete it by hand"
                ),
            }
        }
        if removed.len() > before {
            sync_folder_or_warn(&folder);
            // Only an empty folder goes.
            if fs::remove_dir(&folder).is_ok() {
                sync_folder_or_warn(dir);
            }
        }
    }
    removed
}

/// Flushes a folder's entries (a rename, a new or removed name) to disk. Called after the
/// change is made and visible, so a failure is logged rather than returned: the caller must
/// not think the change did not happen. A no-op where folders cannot be opened (Windows).
fn sync_folder_or_warn(folder: &Path) {
    #[cfg(unix)]
    {
        if let Err(err) = File::open(folder).and_then(|folder| folder.sync_all()) {
            tracing::warn!(
                folder = %folder.display(),
                error = %err,
                "cannot flush the skill folder to disk"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = folder;
}

fn io_error(action: &'static str, path: &Path, source: io::Error) -> WriteError {
    if source.kind() == io::ErrorKind::StorageFull {
        return WriteError::Full {
            path: path.to_path_buf(),
        };
    }
    WriteError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Steps inside a write where a test steps in: to swap the folder before the temporary file is
/// created, or to make writing it fail. Outside tests, nothing.
mod hooks {
    use std::io;
    use std::path::Path;

    /// Where the write is.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Step {
        /// About to create the temporary file (given the folder).
        CreateTemp,
        /// The text is written to the temporary file (given it), not yet flushed.
        WriteTemp,
    }

    #[cfg(not(test))]
    pub(super) fn run(_step: Step, _path: &Path) -> io::Result<()> {
        Ok(())
    }

    #[cfg(test)]
    type Hook = Box<dyn FnMut(Step, &Path) -> io::Result<()>>;

    #[cfg(test)]
    thread_local! {
        static HOOK: std::cell::RefCell<Option<Hook>> = const { std::cell::RefCell::new(None) };
    }

    #[cfg(test)]
    pub(super) fn run(step: Step, path: &Path) -> io::Result<()> {
        HOOK.with(|hook| match hook.borrow_mut().as_mut() {
            Some(hook) => hook(step, path),
            None => Ok(()),
        })
    }

    /// Runs `hook` at every step of the writes this thread makes until the guard is dropped.
    #[cfg(test)]
    pub(super) fn install(hook: impl FnMut(Step, &Path) -> io::Result<()> + 'static) -> Installed {
        HOOK.with(|slot| *slot.borrow_mut() = Some(Box::new(hook)));
        Installed
    }

    #[cfg(test)]
    pub(super) struct Installed;

    #[cfg(test)]
    impl Drop for Installed {
        fn drop(&mut self) {
            HOOK.with(|slot| *slot.borrow_mut() = None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hooks::Step;
    use super::*;

    const OLD: &str = "---\nname: deploy\ndescription: Ship it.\n---\nRun `make deploy`.\n";
    const NEW: &str = "---\nname: deploy\ndescription: Ship it.\n---\nRun `make deploy` twice.\n";

    fn skills_dir() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("skills");
        (root, dir)
    }

    fn write_old(dir: &Path) -> String {
        write_skill_file(dir, "deploy", OLD, &Expected::Absent).unwrap()
    }

    fn on_disk(dir: &Path) -> String {
        fs::read_to_string(dir.join("deploy/SKILL.md")).unwrap()
    }

    /// Every name in a folder, sorted (temporary files included).
    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_a_skill_and_its_folders() {
        let (_root, dir) = skills_dir();
        let sha256 = write_old(&dir);
        assert_eq!(sha256, sha256_hex(OLD.as_bytes()));
        assert_eq!(on_disk(&dir), OLD);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);
        let read = read_skill_file(&dir, "deploy").unwrap().unwrap();
        assert_eq!(
            read,
            SkillFile {
                text: OLD.into(),
                sha256
            }
        );
        // What the scanner sees is the skill just written.
        assert!(
            super::super::scan_skills_dir(&dir).unwrap().skills["deploy"]
                .body
                .contains("make deploy")
        );
    }

    #[test]
    fn reads_nothing_where_there_is_no_skill() {
        let (_root, dir) = skills_dir();
        assert_eq!(read_skill_file(&dir, "deploy").unwrap(), None);
        fs::create_dir_all(dir.join("deploy")).unwrap();
        assert_eq!(read_skill_file(&dir, "deploy").unwrap(), None);
    }

    #[test]
    fn updates_with_the_right_sha256() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let new = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap();
        assert_eq!(new, sha256_hex(NEW.as_bytes()));
        assert_eq!(on_disk(&dir), NEW);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_update_keeps_the_file_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let path = dir.join("deploy/SKILL.md");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn refuses_a_wrong_sha256_and_a_missing_file() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let wrong = sha256_hex(b"something else");
        let err =
            write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(wrong.clone())).unwrap_err();
        assert!(
            matches!(&err, WriteError::Changed { found: Some(found), .. } if *found == old),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("changed on disk"), "{message}");
        assert!(message.contains(&wrong[..12]), "{message}");
        assert_eq!(on_disk(&dir), OLD);

        let err = write_skill_file(&dir, "other", NEW, &Expected::Sha256(old)).unwrap_err();
        assert!(
            matches!(&err, WriteError::Changed { found: None, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("was removed"), "{err}");
        // A refused write leaves no folder behind.
        assert!(!dir.join("other").exists());
    }

    #[test]
    fn refuses_an_existing_file_when_none_is_expected() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Absent).unwrap_err();
        assert!(
            matches!(&err, WriteError::Changed { found: Some(found), .. } if *found == old),
            "{err:?}"
        );
        assert!(err.to_string().contains("was created on disk"), "{err}");
        assert_eq!(on_disk(&dir), OLD);
    }

    #[test]
    fn refuses_every_name_that_leaves_the_folder() {
        let (root, dir) = skills_dir();
        fs::create_dir_all(&dir).unwrap();
        let escapes = [
            "..",
            ".",
            "../deploy",
            "a/../../deploy",
            "a/b",
            "/tmp/deploy",
            "a\\b",
            "..\\deploy",
            "C:\\deploy",
            "c:deploy",
            ".hidden",
            "deploy/",
        ];
        for name in escapes {
            let refused = |result: Result<(), WriteError>| {
                let err = result.unwrap_err();
                assert!(matches!(err, WriteError::Escapes { .. }), "{name}: {err:?}");
                assert!(err.to_string().contains("outside the skills folder"));
            };
            refused(write_skill_file(&dir, name, NEW, &Expected::Absent).map(drop));
            refused(read_skill_file(&dir, name).map(drop));
            refused(remove_skill_file(&dir, name, "0"));
        }
        for name in ["", "a..b", "Deploy", "deploy_2", "-deploy", "a--b", "dé"] {
            let err = write_skill_file(&dir, name, NEW, &Expected::Absent).unwrap_err();
            assert!(matches!(err, WriteError::BadName(_)), "{name:?}: {err:?}");
        }
        assert!(names_in(&dir).is_empty());
        assert_eq!(names_in(root.path()), ["skills"]);
    }

    #[test]
    fn refuses_text_larger_than_a_skill_may_be() {
        let (_root, dir) = skills_dir();
        let text = "x".repeat(MAX_SKILL_MD_BYTES as usize + 1);
        let err = write_skill_file(&dir, "deploy", &text, &Expected::Absent).unwrap_err();
        assert!(matches!(err, WriteError::TooLarge { .. }), "{err:?}");
        assert!(!dir.join("deploy").exists());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_skill_folder_that_links_outside() {
        let (root, dir) = skills_dir();
        let outside = root.path().join("outside");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("deploy")).unwrap();

        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Absent).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        assert!(err.to_string().contains("is a symlink"), "{err}");
        assert!(matches!(
            read_skill_file(&dir, "deploy").unwrap_err(),
            WriteError::Symlink { .. }
        ));
        assert!(names_in(&outside).is_empty());

        fs::write(outside.join("SKILL.md"), OLD).unwrap();
        let sha256 = sha256_hex(OLD.as_bytes());
        let err = remove_skill_file(&dir, "deploy", &sha256).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(sha256)).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        assert_eq!(names_in(&outside), ["SKILL.md"]);
        assert_eq!(fs::read_to_string(outside.join("SKILL.md")).unwrap(), OLD);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_skill_md_that_is_a_link() {
        let (root, dir) = skills_dir();
        let outside = root.path().join("outside.md");
        fs::write(&outside, OLD).unwrap();
        fs::create_dir_all(dir.join("deploy")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("deploy/SKILL.md")).unwrap();
        let sha256 = sha256_hex(OLD.as_bytes());

        for err in [
            write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(sha256.clone())).unwrap_err(),
            write_skill_file(&dir, "deploy", NEW, &Expected::Absent).unwrap_err(),
            read_skill_file(&dir, "deploy").unwrap_err(),
            remove_skill_file(&dir, "deploy", &sha256).unwrap_err(),
        ] {
            assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        }
        assert_eq!(fs::read_to_string(&outside).unwrap(), OLD);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);

        // A link to nothing is refused too, not taken for a missing file.
        fs::remove_file(&outside).unwrap();
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Absent).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        assert!(!outside.exists());
    }

    #[test]
    fn refuses_what_is_not_a_folder_or_a_file() {
        let (_root, dir) = skills_dir();
        fs::create_dir_all(dir.join("deploy/SKILL.md")).unwrap();
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Absent).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::NotRegular {
                    expected: "regular file",
                    ..
                }
            ),
            "{err:?}"
        );
        fs::write(dir.join("notes"), "x").unwrap();
        let err = write_skill_file(&dir, "notes", NEW, &Expected::Absent).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::NotRegular {
                    expected: "folder",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("move it out of the way"), "{err}");
    }

    #[test]
    fn refuses_an_existing_file_that_is_not_utf8() {
        let (_root, dir) = skills_dir();
        fs::create_dir_all(dir.join("deploy")).unwrap();
        let bytes = b"---\nname: deploy\xff\n";
        fs::write(dir.join("deploy/SKILL.md"), bytes).unwrap();
        let err = read_skill_file(&dir, "deploy").unwrap_err();
        assert!(matches!(err, WriteError::NotUtf8 { .. }), "{err:?}");
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        let expected = Expected::Sha256(sha256_hex(bytes));
        let err = write_skill_file(&dir, "deploy", NEW, &expected).unwrap_err();
        assert!(matches!(err, WriteError::NotUtf8 { .. }), "{err:?}");
        assert_eq!(fs::read(dir.join("deploy/SKILL.md")).unwrap(), bytes);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_folder_swapped_for_a_link_during_the_write() {
        let (root, dir) = skills_dir();
        let old = write_old(&dir);
        let outside = root.path().join("outside");
        let moved = root.path().join("moved");
        fs::create_dir(&outside).unwrap();
        let folder = dir.join("deploy");
        let seen_outside = std::rc::Rc::new(std::cell::RefCell::new(None));
        let _hook = hooks::install({
            let (folder, outside, moved) = (folder.clone(), outside.clone(), moved.clone());
            let seen_outside = seen_outside.clone();
            move |step, _| {
                match step {
                    Step::CreateTemp => {
                        fs::rename(&folder, &moved)?;
                        std::os::unix::fs::symlink(&outside, &folder)?;
                    }
                    // While the temporary file exists: it must be in the folder Lull checked.
                    Step::WriteTemp => *seen_outside.borrow_mut() = Some(names_in(&outside)),
                }
                Ok(())
            }
        });
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        // Regression: the temporary file used to be created through the link, outside the
        // skills folder (and removed again); it is now created in the open folder.
        assert_eq!(*seen_outside.borrow(), Some(Vec::<String>::new()));
        assert!(names_in(&outside).is_empty());
        assert_eq!(names_in(&moved), ["SKILL.md"]);
        assert_eq!(fs::read_to_string(moved.join("SKILL.md")).unwrap(), OLD);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_folder_replaced_by_another_during_the_write() {
        let (root, dir) = skills_dir();
        let old = write_old(&dir);
        let folder = dir.join("deploy");
        let moved = root.path().join("moved");
        let _hook = hooks::install({
            let (folder, moved) = (folder.clone(), moved.clone());
            move |step, _| {
                if step == Step::WriteTemp {
                    fs::rename(&folder, &moved)?;
                    fs::create_dir(&folder)?;
                    fs::copy(moved.join("SKILL.md"), folder.join("SKILL.md"))?;
                }
                Ok(())
            }
        });
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap_err();
        assert!(matches!(err, WriteError::FolderReplaced { .. }), "{err:?}");
        assert!(err.to_string().contains("try again"), "{err}");
        assert_eq!(on_disk(&dir), OLD);
        assert_eq!(names_in(&folder), ["SKILL.md"]);
    }

    #[test]
    fn checks_the_file_again_right_before_the_rename() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let edited = "---\nname: deploy\ndescription: Ship it.\n---\nThe person's edit.\n";
        let _hook = hooks::install({
            let path = dir.join("deploy/SKILL.md");
            move |step, _| {
                if step == Step::WriteTemp {
                    fs::write(&path, edited)?;
                }
                Ok(())
            }
        });
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap_err();
        let found = sha256_hex(edited.as_bytes());
        assert!(
            matches!(&err, WriteError::Changed { found: Some(sha), .. } if *sha == found),
            "{err:?}"
        );
        assert_eq!(on_disk(&dir), edited);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_text_and_no_temporary_file() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let _hook = hooks::install(|step, _| match step {
            Step::WriteTemp => Err(io::Error::other("input/output error")),
            Step::CreateTemp => Ok(()),
        });
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::Io {
                    action: "write",
                    ..
                }
            ),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("cannot write"), "{message}");
        assert!(message.contains("input/output error"), "{message}");
        assert_eq!(on_disk(&dir), OLD);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);

        // A failed create leaves no folder behind.
        let err = write_skill_file(&dir, "other", NEW, &Expected::Absent).unwrap_err();
        assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
        assert!(!dir.join("other").exists());
    }

    #[test]
    fn a_full_disk_is_named_as_such_with_where_to_free_space() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let _hook = hooks::install(|step, _| match step {
            Step::WriteTemp => Err(io::ErrorKind::StorageFull.into()),
            Step::CreateTemp => Ok(()),
        });
        let err = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old)).unwrap_err();
        assert!(matches!(err, WriteError::Full { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&dir.display().to_string()), "{message}");
        assert!(message.contains("is full: free some space"), "{message}");
        assert_eq!(on_disk(&dir), OLD);
        assert_eq!(names_in(&dir.join("deploy")), ["SKILL.md"]);
    }

    #[test]
    fn leftover_temporary_files_are_removed_and_only_they() {
        let (_root, dir) = skills_dir();
        write_old(&dir);
        let leftover = temp_name(&uuid::Uuid::new_v4().simple().to_string());
        fs::write(dir.join("deploy").join(&leftover), NEW).unwrap();
        fs::write(dir.join("deploy/.SKILL.md.notes.tmp"), "mine").unwrap();
        // A new skill's first write, cut off: its folder holds nothing else.
        fs::create_dir_all(dir.join("fresh")).unwrap();
        fs::write(dir.join("fresh").join(&leftover), NEW).unwrap();

        let removed = remove_leftover_temp_files(&dir);
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert_eq!(
            names_in(&dir.join("deploy")),
            [".SKILL.md.notes.tmp", "SKILL.md"],
            "a name the writer does not give is not its to remove"
        );
        assert_eq!(on_disk(&dir), OLD);
        assert!(!dir.join("fresh").exists());
        assert!(remove_leftover_temp_files(&dir).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_folder_is_a_clear_error() {
        use std::os::unix::fs::PermissionsExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            eprintln!("skipped: root writes into read-only folders");
            return;
        }
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let folder = dir.join("deploy");
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
        let result = write_skill_file(&dir, "deploy", NEW, &Expected::Sha256(old));
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
        let message = result.unwrap_err().to_string();
        assert!(
            message.contains("cannot create a temporary file in"),
            "{message}"
        );
        assert!(message.contains("you can write to it"), "{message}");
        assert_eq!(on_disk(&dir), OLD);
        assert_eq!(names_in(&folder), ["SKILL.md"]);
    }

    #[test]
    fn removes_the_file_and_the_folder_it_leaves_empty() {
        let (_root, dir) = skills_dir();
        let old = write_old(&dir);
        let err = remove_skill_file(&dir, "deploy", &sha256_hex(b"other")).unwrap_err();
        assert!(matches!(err, WriteError::Changed { .. }), "{err:?}");
        assert_eq!(on_disk(&dir), OLD);

        remove_skill_file(&dir, "deploy", &old).unwrap();
        assert!(!dir.join("deploy").exists());
        let err = remove_skill_file(&dir, "deploy", &old).unwrap_err();
        assert!(
            matches!(err, WriteError::Changed { found: None, .. }),
            "{err:?}"
        );

        // A folder with more than SKILL.md in it stays, with the rest.
        let old = write_old(&dir);
        fs::write(dir.join("deploy/notes.txt"), "mine").unwrap();
        remove_skill_file(&dir, "deploy", &old).unwrap();
        assert_eq!(names_in(&dir.join("deploy")), ["notes.txt"]);
    }

    #[test]
    fn diffs_a_create_an_update_and_no_change() {
        assert_eq!(
            unified_diff("deploy", None, "a\nb\n"),
            "--- /dev/null\n+++ b/deploy/SKILL.md\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
        assert_eq!(
            unified_diff("deploy", Some("a\nb\nc\n"), "a\nB\nc\n"),
            "--- a/deploy/SKILL.md\n+++ b/deploy/SKILL.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(unified_diff("deploy", Some(OLD), OLD), "");
    }

    #[test]
    fn the_sha256_is_the_safety_reports() {
        let report = crate::safety::check_text("SKILL.md", OLD);
        assert_eq!(report.sha256, sha256_hex(OLD.as_bytes()));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
