//! A skill folder: every text file is checked (scripts as code), and what is not text to read
//! is a finding of its own — programs, symlinks that leave the folder, files too big to read.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::document::Kind;
use super::{
    check_file_text, excerpt, sha256_hex, with_code_findings, Category, CheckedFile, Finding, Risk,
    SafetyReport,
};

/// Files above this size are not read (a finding says so): a skill is a page, not a data set.
pub const MAX_CHECKED_FILE_BYTES: u64 = 1024 * 1024;
/// Files past this count are not read (a finding says so).
pub const MAX_CHECKED_FILES: usize = 500;
/// Folders deeper than this are not entered.
const MAX_DEPTH: usize = 8;

/// Extensions read as code from their first line.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "py", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "ps1", "bat",
    "cmd", "lua", "go", "rs",
];

/// Checks one file with the line rules; `name` is how findings name it. Its code is returned
/// for the code pass, which runs over every file of the skill at once.
pub(super) fn check_file(path: &Path, name: &str) -> std::io::Result<CheckedFile> {
    let whole = |findings: Vec<Finding>, sha256: String| CheckedFile {
        file: name.to_string(),
        findings,
        sha256,
        code: Vec::new(),
        quiet: Default::default(),
    };
    let size = std::fs::metadata(path)?.len();
    if size > MAX_CHECKED_FILE_BYTES {
        return Ok(whole(
            vec![whole_file(
                "folder.oversized-file",
                Risk::Medium,
                name,
                format!("is {size} bytes, too big to check (over {MAX_CHECKED_FILE_BYTES}): a skill needs no file this size; remove it or check it by hand"),
            )],
            String::new(),
        ));
    }
    let bytes = std::fs::read(path)?;
    let Some(text) = std::str::from_utf8(&bytes)
        .ok()
        .filter(|t| !t.contains('\0'))
    else {
        return Ok(whole(
            vec![binary_finding(name, &bytes)],
            sha256_hex(&bytes),
        ));
    };
    let is_script = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        || text.starts_with("#!");
    let extension = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let kind = match extension.as_deref() {
        _ if is_script => Kind::Script,
        None | Some("md" | "markdown" | "mdx") => Kind::Markdown,
        Some(_) => Kind::Text,
    };
    Ok(check_file_text(name, text, kind))
}

/// Checks every file under `root`, in path order; the digest covers each file's path and sha256.
pub(super) fn check_folder(root: &Path) -> std::io::Result<SafetyReport> {
    let root = root.canonicalize()?;
    let mut files = Vec::new();
    let mut findings = Vec::new();
    walk(&root, &root, 0, &mut files, &mut findings)?;
    files.sort();
    let mut digest = Sha256::new();
    let mut checked = Vec::new();
    for (count, path) in files.iter().enumerate() {
        let name = relative_name(&root, path);
        if count == MAX_CHECKED_FILES {
            findings.push(whole_file(
                "folder.too-many-files",
                Risk::Medium,
                &name,
                format!("and the files after it were not checked: the folder holds more than {MAX_CHECKED_FILES} files; a skill needs a handful"),
            ));
            break;
        }
        match check_file(path, &name) {
            Ok(file) => {
                digest.update(name.as_bytes());
                digest.update([0]);
                digest.update(file.sha256.as_bytes());
                digest.update([b'\n']);
                checked.push(file);
            }
            Err(error) => findings.push(whole_file(
                "folder.unreadable-file",
                Risk::Medium,
                &name,
                format!("could not be read ({error}), so it was not checked: fix its permissions and check again"),
            )),
        }
    }
    findings.extend(with_code_findings(checked));
    Ok(SafetyReport::new(
        findings,
        format!("{:x}", digest.finalize()),
    ))
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    findings: &mut Vec<Finding>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = relative_name(root, &path);
        let file_type = entry.file_type()?;
        if file_type.is_symlink() {
            match path.canonicalize() {
                Ok(target) if target.starts_with(root) => {}
                Ok(target) => findings.push(whole_file(
                    "folder.symlink-escape",
                    Risk::High,
                    &name,
                    format!("is a link to {}, outside the skill's folder, so installing the skill would reach there: replace the link with the file itself", target.display()),
                )),
                Err(_) => findings.push(whole_file(
                    "folder.symlink-escape",
                    Risk::Medium,
                    &name,
                    "is a link to nothing that exists here; it would point wherever the installing machine has that path: remove it".into(),
                )),
            }
            continue;
        }
        if file_type.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(root, &path, depth + 1, files, findings)?;
            } else {
                findings.push(whole_file(
                    "folder.too-deep",
                    Risk::Medium,
                    &name,
                    format!("was not checked: it is nested more than {MAX_DEPTH} folders deep"),
                ));
            }
        } else if file_type.is_file() {
            files.push(path);
        } else {
            findings.push(whole_file(
                "folder.special-file",
                Risk::High,
                &name,
                "is not a regular file (a device, socket or pipe): remove it".into(),
            ));
        }
    }
    Ok(())
}

fn relative_name(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn whole_file(rule: &'static str, risk: Risk, name: &str, message: String) -> Finding {
    Finding {
        rule,
        category: Category::FolderContent,
        risk,
        file: name.to_string(),
        line: 0,
        excerpt: excerpt(name),
        message: format!("`{name}` {message}"),
        source: None,
    }
}

/// Programs are what a skill must not smuggle; images and archives are only unreadable.
fn binary_finding(name: &str, bytes: &[u8]) -> Finding {
    const PROGRAMS: &[&[u8]] = &[
        b"\x7fELF",
        b"MZ",
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"\0asm",
    ];
    const IMAGES: &[&[u8]] = &[b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"%PDF"];
    if PROGRAMS.iter().any(|magic| bytes.starts_with(magic)) {
        whole_file(
            "folder.executable",
            Risk::High,
            name,
            "is a compiled program, which nobody can read before it runs: remove it; a skill ships source, not binaries".into(),
        )
    } else if IMAGES.iter().any(|magic| bytes.starts_with(magic)) {
        whole_file(
            "folder.binary-file",
            Risk::Low,
            name,
            "is an image or document, not checked: fine if the skill shows it".into(),
        )
    } else {
        whole_file(
            "folder.binary-file",
            Risk::Medium,
            name,
            "is binary data that cannot be read or checked: remove it, or say in the skill what it is".into(),
        )
    }
}
